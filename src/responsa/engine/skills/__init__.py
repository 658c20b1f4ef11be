"""Skills (``/v1/skills``): versioned folders of files with a ``SKILL.md``, and the skills a hosted
shell's container mounts read-only."""

from ._bundle import Bundle, mounted_files, read_bundle, unpack
from ._skills import SkillService, skill_object, version_object

__all__ = ["Bundle", "SkillService", "mounted_files", "read_bundle", "skill_object", "unpack", "version_object"]
