"""A container's ``network_policy``, checked where a request names it: ``disabled`` (the default: no
network at all) or an ``allowlist`` of domains, which the container reaches through the server's
egress proxy (``external/_egress.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from responsa.protocol import InvalidRequest

__all__ = ["check_network_policy"]


def check_network_policy(policy: Mapping[str, object] | None, param: str) -> None:
    """``disabled`` (no network at all, the default) or ``allowlist`` with ``allowed_domains`` (host names,
    reached through the server's proxy and egress policy); ``domain_secrets`` would need the proxy to
    read the container's TLS: a 400."""
    if policy is None or policy.get("type") in (None, "disabled"):
        return
    if policy.get("type") != "allowlist":
        raise InvalidRequest("'network_policy' must be 'disabled' or 'allowlist'.", param=f"{param}.type",
                             code="invalid_value")  # fmt: skip
    domains = policy.get("allowed_domains")
    if not isinstance(domains, list) or not domains or not all(_is_domain(domain) for domain in domains):
        raise InvalidRequest("An allowlist needs 'allowed_domains': host names, without a scheme or a path.",
                             param=f"{param}.allowed_domains", code="invalid_value")  # fmt: skip
    if policy.get("domain_secrets"):
        raise InvalidRequest("'domain_secrets' are not supported here: the proxy does not read the container's "
                             "TLS to add them.", param=f"{param}.domain_secrets", code="unsupported_value")  # fmt: skip


def _is_domain(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= 253
        and all(part and all(char.isalnum() or char in "-_" for char in part) for part in value.strip(".").split("."))
    )
