"""JSON Schema documents a request gives (a function's ``parameters``, a ``json_schema`` format),
checked to be valid schemas before anything runs."""

from __future__ import annotations

from typing import Any

from responsa.protocol import InvalidRequest

__all__ = ["check_schema"]


def check_schema(schema: dict[str, Any], param: str) -> None:
    """400 ``invalid_schema`` naming ``param`` when ``schema`` is not a valid JSON Schema."""
    import jsonschema  # on first use: most servers never see a schema, and it is 2 MB of memory
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidRequest(
            f"Invalid schema for '{param}': {exc.message}", param=param, code="invalid_schema"
        ) from exc
