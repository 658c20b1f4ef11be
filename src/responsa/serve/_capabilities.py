"""Every optional capability, probed once at start, each by the module that knows it: the libraries in
a child interpreter, the sandbox by starting one, the services by asking them. One that cannot work
is off; the start-up log says why in one line, and ``/v1/server`` and ``responsa doctor`` report it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

import anyio
from sqlalchemy.engine import make_url

from responsa.backends import BackendRegistry
from responsa.config import Settings
from responsa.engine import probe_pdf_text
from responsa.external import SearchProvider, probe_page_extraction, probe_sandbox, probe_sandbox_libraries
from responsa.http import Limiter
from responsa.protocol import Capability

__all__ = ["by_name", "log_capabilities", "probe_capabilities", "probe_installation", "store_capability"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_REINSTALL = "./install.sh installs the locked set"


async def _at_once(*calls: Callable[[], Awaitable[T]]) -> list[T]:
    """Each call's result, in order, the calls run side by side."""
    results: dict[int, T] = {}

    async def run(index: int, call: Callable[[], Awaitable[T]]) -> None:
        results[index] = await call()

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(run, index, call)
    return [results[index] for index in range(len(calls))]


async def probe_installation(settings: Settings) -> list[Capability]:
    """What this installation's libraries and binaries can do: the same for every process started from
    it, so ``--workers N``'s parent probes once and hands its findings to each worker (``WorkerGroup``),
    instead of N workers each starting the probes' interpreters and a sandbox at the same moment."""
    probes = {"page_extraction": probe_page_extraction, "pdf_text": probe_pdf_text}
    if settings.code_interpreter:  # the code libraries serve only code run in the sandbox
        probes |= {"code_libraries": probe_sandbox_libraries, "code_sandbox": probe_sandbox}
    failures = await _at_once(*(partial(anyio.to_thread.run_sync, probe) for probe in probes.values()))
    failed = dict(zip(probes, failures, strict=True))
    found = [
        Capability.probed("page_extraction", failed["page_extraction"], "trafilatura reads web_search's pages",
                          f"pip install trafilatura lxml_html_clean ({_REINSTALL})"),
        Capability.probed("pdf_text", failed["pdf_text"], "pypdf reads the text of PDF files added to vector stores",
                          f"pip install pypdf ({_REINSTALL})"),
    ]  # fmt: skip
    if settings.code_interpreter:
        found += [
            Capability.probed("code_libraries", failed["code_libraries"],
                              "numpy, pandas and matplotlib (plots as PNG) for the code interpreter",
                              f"pip install numpy pandas matplotlib ({_REINSTALL})"),
            Capability.probed("code_sandbox", failed["code_sandbox"], "bubblewrap sandboxes the model's code",
                              "apt-get install bubblewrap util-linux, and allow user namespaces"),
        ]  # fmt: skip
    else:
        found += [Capability(name, False, "turned off (--no-code-interpreter)", "leave out --no-code-interpreter",
                             default=False) for name in ("code_libraries", "code_sandbox")]  # fmt: skip
    return found


async def _models(settings: Settings, registry: BackendRegistry) -> list[Capability]:
    """What the backends found (the embedded models, the upstreams), and the embedding model."""
    found = await registry.capabilities()
    if settings.embedding_model is not None:
        found.append(Capability("embedding_model", True, f"vector stores embed with {settings.embedding_model}",
                                default=False))  # fmt: skip
    return found


async def _search(provider: SearchProvider | None) -> list[Capability]:
    if provider is None:
        return []
    failure = await provider.check()
    return [Capability.probed("web_search_provider", failure, f"web_search searches with {provider.name}",
                              "check --web-search (its URL, its key)", default=False)]  # fmt: skip


async def probe_capabilities(
    settings: Settings,
    registry: BackendRegistry,
    limiter: Limiter,
    provider: SearchProvider | None,
    installed: Sequence[Capability] | None = None,
) -> list[Capability]:
    """Every optional capability this server has (or is configured to have), as probed now: the probes
    of the installation (unless ``installed`` gives what they found), the backends, the search provider
    and the limiter run side by side."""
    installation = partial(probe_installation, settings) if installed is None else partial(_given, installed)
    groups = await _at_once(installation, partial(_models, settings, registry),
                            partial(_search, provider), partial(_service, limiter))  # fmt: skip
    return [capability for group in groups for capability in group]


async def _given(found: Sequence[Capability]) -> list[Capability]:
    return list(found)


async def _service(limiter: Limiter) -> list[Capability]:
    service = await limiter.capability()
    return [] if service is None else [service]


def store_capability(url: str, schema: str) -> Capability:
    """The store at ``url`` (its password hidden), its schema as ``schema`` says."""
    shown = make_url(url).render_as_string(hide_password=True)
    return Capability("store", True, f"{shown}: {schema}")


def by_name(capabilities: Sequence[Capability]) -> dict[str, Capability]:
    return {capability.name: capability for capability in capabilities}


def log_capabilities(capabilities: Sequence[Capability]) -> None:
    """One line for each capability that is off, with why and the fix."""
    for capability in capabilities:
        if not capability.on:
            logger.warning("%s is off: %s (fix: %s)", capability.name, capability.detail, capability.fix)
