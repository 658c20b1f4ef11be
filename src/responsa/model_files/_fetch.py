"""Bring a model's GGUF onto this disk: Hugging Face files through ``huggingface_hub`` (its cache,
tokens, ``HF_ENDPOINT`` and resumable ``.incomplete`` blobs), URLs into responsa's cache directory.
Both show a progress bar on stderr, resume an interrupted download, check the size and, where the
source says it, the sha256."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from platformdirs import user_cache_dir

from ._hub_cache import snapshots
from ._source import ModelSource, is_model_file, model_name

if TYPE_CHECKING:
    from huggingface_hub import RepoFile

__all__ = ["ModelFetchError", "fetch", "fetch_projector", "models_dir"]

_PROJECTOR_PREFERENCE = ("f16", "bf16", "q8_0", "f32")
"""Which of a repository's projectors (``mmproj-…``) a repository source takes: llama.cpp's ``-hf`` takes
the F16 one where there are several."""
_DEFAULT_QUANT = "Q4_K_M"
"""What ``owner/repo`` without ``:QUANT`` picks when the repository offers several (as Ollama and llama.cpp do)."""


class ModelFetchError(Exception):
    """The source cannot be brought here; the message says why and what to do."""


def models_dir() -> Path:
    """Where URL downloads land, e.g. ``~/.cache/responsa/models``."""
    return Path(user_cache_dir("responsa")) / "models"


def fetch(source: ModelSource, refresh: bool = False) -> Path:
    """The local path of ``source``'s GGUF (its first shard when split), downloading what is missing.

    Without ``refresh`` a model already here is used without asking the network (``serve``); with it
    a Hugging Face repository is listed again, so a newer file is fetched (``pull``)."""
    if source.kind == "path":
        assert source.path is not None
        return source.path
    if source.kind == "url":
        return _fetch_url(source)
    if not refresh and (cached := _cached_hub_files(source)):
        return cached[0]
    return _fetch_hub(source)


def fetch_projector(source: ModelSource) -> Path | None:
    """The multimodal projector a Hugging Face repository source came with (an ``mmproj-…gguf`` beside
    the model, fetched with it as llama.cpp's ``-hf`` does), from the cache; None when the repository
    has none or the source is a file or URL (their projector is named separately)."""
    if source.kind != "hf" or source.filename is not None:
        return None
    for repo, revision, files in snapshots():
        if repo.repo_id == source.repo and repo.repo_type == "model" and "main" in revision.refs:
            chosen = _projector_of(files)
            return files[chosen].file_path if chosen else None
    return None


def _projector_of(files: Iterable[str]) -> str | None:
    found = sorted(f for f in files if f.lower().endswith(".gguf") and "mmproj" in f.lower())
    for kind in _PROJECTOR_PREFERENCE:
        for name in found:
            if _quant_of(name).lower() == kind:
                return name
    return found[0] if found else None


def _fetch_url(source: ModelSource) -> Path:
    from huggingface_hub.file_download import http_get

    assert source.url is not None
    parts = urlsplit(source.url)
    target = models_dir() / (parts.hostname or "local") / (parts.path.rsplit("/", 1)[-1] or "model.gguf")
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".incomplete")
    try:
        with partial.open("ab") as out:
            http_get(source.url, out, resume_size=out.tell(), displayed_filename=target.name)
    except _network_errors() as exc:
        raise ModelFetchError(f"{source.url}: {exc} (run the same command again to resume)") from exc
    if source.sha256 is not None:
        _check_sha256(partial, source.sha256, source.text)
    partial.replace(target)
    return target


def _fetch_hub(source: ModelSource) -> Path:
    from huggingface_hub import HfApi, RepoFile

    assert source.repo is not None
    try:
        listing = {
            entry.path: entry
            for entry in HfApi().list_repo_tree(source.repo, recursive=True)
            if isinstance(entry, RepoFile)
        }
        paths = [_hub_file(source.repo, name, listing[name]) for name in _choose(source, listing)]
        if source.filename is None and (projector := _projector_of(listing)):
            _hub_file(source.repo, projector, listing[projector])  # served with the model: see fetch_projector
    except _network_errors() as exc:
        raise ModelFetchError(f"{source.text}: {exc} (run the same command again to resume)") from exc
    return paths[0]


def _hub_file(repo: str, name: str, entry: RepoFile) -> Path:
    """One file of a Hub repository in the Hugging Face cache.

    huggingface_hub (2.x) restarts an interrupted HTTP download from zero, so an LFS file's bytes are
    fetched here into ``blobs/<sha256>.incomplete`` with its own ``http_get`` (ranged, progress bar),
    checked, and moved to the blob path; ``hf_hub_download`` then only links it into the snapshot. A
    file stored with Xet is left to ``hf_xet``, whose chunk cache keeps what it fetched."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.file_download import http_get, repo_folder_name
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # public, documented

    if not hf_hub_download(repo, name, dry_run=True).will_download:
        return Path(hf_hub_download(repo, name))
    url = hf_hub_url(repo, name)
    headers = build_hf_headers()
    meta = get_hf_file_metadata(url, headers=headers)
    if not meta.etag or entry.lfs is None or meta.xet_file_data is not None or meta.etag != entry.lfs.sha256:
        return Path(hf_hub_download(repo, name))
    if urlsplit(meta.location).hostname != urlsplit(url).hostname:
        headers.pop("authorization", None)  # a signed CDN URL: the token stays with the Hub
    blob = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type="model") / "blobs" / meta.etag
    partial = blob.with_name(blob.name + ".incomplete")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with partial.open("ab") as out:
        http_get(meta.location, out, resume_size=out.tell(), headers=headers, expected_size=entry.size,
                 displayed_filename=Path(name).name)  # fmt: skip
    _check_sha256(partial, entry.lfs.sha256, f"{repo}/{name}")
    partial.replace(blob)
    return Path(hf_hub_download(repo, name))


def _network_errors() -> tuple[type[Exception], ...]:
    """What a download can fail with that is the network's or the server's doing, not a bug."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    return HfHubHTTPError, OfflineModeIsEnabled, httpx2.TransportError, OSError


def _choose(source: ModelSource, files: Iterable[str]) -> list[str]:
    """The repository files ``source`` means: its file (with the other shards of a split one), or the
    one GGUF whose name carries its quantization; several or none is an error naming the choices."""
    ggufs = sorted(f for f in files if is_model_file(f))
    if source.filename is not None:
        wanted = model_name(source.filename)
        chosen = [f for f in ggufs if f == source.filename or (_is_shard(f) and model_name(f) == wanted)]
        if not chosen:
            raise ModelFetchError(f"{source.repo} has no file {source.filename} (it has: {', '.join(ggufs)})")
        return chosen
    models: dict[str, list[str]] = {}
    for name in ggufs:
        models.setdefault(model_name(name), []).append(name)
    quant = source.quant or (_DEFAULT_QUANT if len(models) > 1 else None)
    if quant is not None:
        pattern = re.compile(rf"(^|[-._/]){re.escape(quant.lower())}($|[-._])")
        models = {name: shards for name, shards in models.items() if pattern.search(name.lower())}
    if len(models) != 1:
        choices = ", ".join(sorted({_quant_of(f) for f in ggufs})) or "none"
        if not ggufs:
            found = "the repository has no GGUF"
        elif source.quant is None:
            found = f"the repository has several GGUFs and none is {_DEFAULT_QUANT}"
        else:
            found = "several files match" if models else "no GGUF matches"
        raise ModelFetchError(f"{source.text}: {found}; name a quantization: {source.repo}:QUANT ({choices})")
    [shards] = models.values()
    return shards


def _cached_hub_files(source: ModelSource) -> list[Path]:
    """``source``'s files in the Hugging Face cache, for the revision ``main`` points at, if all are there."""
    for repo, revision, files in snapshots():
        if repo.repo_id == source.repo and repo.repo_type == "model" and "main" in revision.refs:
            try:
                return [files[name].file_path for name in _choose(source, files)]
            except ModelFetchError:
                return []
    return []


def _is_shard(name: str) -> bool:
    return model_name(name) != Path(name).name.removesuffix(".gguf")


def _quant_of(name: str) -> str:
    """The quantization part of a GGUF's name (``Q4_K_M`` of ``Qwen2.5-0.5B-Instruct-Q4_K_M.gguf``)."""
    return model_name(name).rsplit("-", 1)[-1].rsplit(".", 1)[-1]


def _check_sha256(path: Path, expected: str, what: str) -> None:
    """Hash the downloaded file; a mismatch deletes it (it would never load right) and says so."""
    digest = hashlib.sha256()
    with path.resolve().open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != expected.lower():
        path.resolve().unlink()
        path.unlink(missing_ok=True)
        raise ModelFetchError(
            f"{what}: sha256 {digest.hexdigest()} is not the expected {expected}; the file was removed"
        )
