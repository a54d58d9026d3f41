"""The spec's numbers, each named once.

Every other module imports these; a literal 10, 16384 or 30 anywhere else is a bug.
"""

#: A tool call that has not answered by then is aborted and treated as a timeout
#: ("Tools should respond within ten seconds"). Covers DNS, connect, headers and body.
CALL_DEADLINE_SECONDS = 10.0

#: Part of the call deadline given to name resolution, so a resolver that never
#: answers fails the call as a transport error rather than eating the whole budget.
DNS_BUDGET_SECONDS = 5.0

#: "Successful responses should stay below 16 KB (16,384 characters)." Exactly this many passes.
RESPONSE_CAP_CHARS = 16_384

#: An endpoint's status line and headers together, every interim 1xx answer included, in bytes.
#: Far above what APIs send (a few KiB at most); past it the call is a transport error, so a
#: hostile head costs at most this much memory and parsing, never the worker.
MAX_RESPONSE_HEAD_BYTES = 65_536

#: A call assertion's `exp` is `iat` plus this ("thirty seconds after the call is minted").
ASSERTION_LIFETIME_SECONDS = 30

#: A session token lives at most this long ("a token's claims can be up to thirty minutes old").
SESSION_TOKEN_MAX_SECONDS = 1_800

#: How long a call awaiting the person's approval may be approved (TOOLGATE_APPROVAL_LIFETIME_SECONDS changes it);
#: never past the expiry of the session token that made it.
APPROVAL_LIFETIME_SECONDS = 300
#: Entitlements one session token carries at most.
MAX_ENTITLEMENTS = 100

#: Clock skew a verifier tolerates, in seconds (RFC 8725: keep leeway to a few seconds).
CLOCK_SKEW_SECONDS = 5

#: How many calls of one step run at once; a step larger than this queues the rest.
STEP_POOL_SIZE = 500

#: Sockets one process keeps open to one tool host at once, shared by every step's calls to it. Above any
#: organization's share of calls in flight, so a thousand waiting steps on one slow host are not queued behind
#: each other into the deadline; bounded, so one host cannot take every file a process may open.
MAX_CONNECTIONS_PER_HOST = 4_096

#: The longest message a person may send in one turn.
MAX_MESSAGE_CHARS = 32_768

#: How many calls one model step may ask for.
MAX_CALLS_PER_STEP = 500

#: Database connections one process keeps by default (TOOLGATE_DATABASE_POOL_SIZE), and how long a request waits
#: for a free one before a 503 (TOOLGATE_DATABASE_POOL_WAIT_SECONDS). A request holds one only while it asks.
DATABASE_POOL_SIZE = 32
DATABASE_POOL_WAIT_SECONDS = 2.0
#: The longest any one wait on the database may take by default (TOOLGATE_DATABASE_TIMEOUT_SECONDS): taking a
#: connection (the pool's wait above included, which it caps), each statement, lock, commit and pause inside a
#: transaction. Past it the request answers 503 `database-unavailable`, so a database that stops answering holds no
#: request longer; every statement the service runs takes milliseconds. The setting takes (0, MAX_…] seconds: past a
#: minute a deadline no longer protects anything (a worker without a heartbeat is restarted at 60 s).
DATABASE_TIMEOUT_SECONDS = 5.0
MAX_DATABASE_TIMEOUT_SECONDS = 60.0

#: Requests of one process doing their CPU work at once by default (TOOLGATE_MAX_REQUESTS_AT_WORK; see service.gate),
#: and how long a request waits for a place before a 503 `busy` (TOOLGATE_WORK_WAIT_SECONDS). A place is given back
#: while its request waits on the network, so this bounds the run queue, not the requests in flight: a few slices of
#: a millisecond or two keep a liveness probe prompt, and a wait long enough for a burst of a thousand steps (one
#: core works through one in about two seconds) still refuses a process that stays past its capacity.
MAX_REQUESTS_AT_WORK = 16
WORK_WAIT_SECONDS = 5.0
#: Seconds a client told 503 `busy` waits before trying again: the queue it met moves by hundreds a second.
BUSY_RETRY_AFTER_SECONDS = 1

#: How long a client may take to send a request (TOOLGATE_HEAD_TIMEOUT_SECONDS, TOOLGATE_BODY_TIMEOUT_SECONDS): its
#: head from its first byte (a new connection's accept), and the longest its body may go without a byte. Past either
#: the request is answered 408 and its connection closed. A request holds no place at the work gate and no database
#: connection while it arrives, only its socket: these bound how long it holds even that.
HEAD_TIMEOUT_SECONDS = 10.0
BODY_TIMEOUT_SECONDS = 10.0
#: How long a kept-alive connection may wait for its next request (TOOLGATE_IDLE_TIMEOUT_SECONDS); a load balancer
#: keeps its own pool warm within it.
IDLE_TIMEOUT_SECONDS = 75.0
#: Client connections one process serves at once (TOOLGATE_MAX_CONNECTIONS). Past it a new connection takes the place
#: of the one that has waited longest for its request, or is refused 503 `busy` at once when all are at work; a
#: step's own calls are outbound and not counted. Above an organization's share of calls in flight, so a step past
#: that share is answered 429 rather than left queued.
MAX_CONNECTIONS = 4_096
#: Seconds every place at the work gate may stay taken, none given back, before /readyz says the process cannot admit
#: work: longer than any one request's CPU work, short enough for a balancer to steer around a stuck process.
SATURATED_GRACE_SECONDS = 1.0

#: Tool calls one organization may have in flight in one process by default (TOOLGATE_MAX_CALLS_IN_FLIGHT_PER_ORG),
#: so one organization's slow tools cannot take every slot of an instance. At least one whole step.
DEFAULT_CALLS_IN_FLIGHT_PER_ORG = 1_000

#: Seconds a client told 429 `too-many-calls` waits before trying again: calls in flight end within the deadline,
#: most far sooner.
TOO_MANY_CALLS_RETRY_AFTER_SECONDS = 2

#: Seconds a stopping service (SIGTERM) gives requests in flight to finish before it cuts them: several steps' worth
#: of call deadlines, and what orchestrators give by default (Kubernetes, gunicorn) before they kill. A whole turn
#: run by the platform may take longer (TOOLGATE_TURN_DEADLINE_SECONDS) and is then cut. gunicorn's workers get the
#: same.
STOP_GRACE_SECONDS = 30
#: A day, in seconds: call retention is counted in days, and no wait of the platform's own may be set past one.
SECONDS_PER_DAY = 86_400
#: The latest time, in Unix seconds, a summary's window may name (10000-01-01 UTC): later is no time a call was made,
#: and past what the rollups' integer bucket starts hold.
LATEST_SUMMARY_TIME = 253_402_300_800.0
#: On PostgreSQL, the call log's day partitions the service keeps made ahead of today: days of slack should creating
#: one fail (its lock not had within a second, the database away), since each hourly upkeep tries again.
CALL_LOG_DAYS_AHEAD = 3
#: Seconds between two upkeeps of the call log's partitions by each service process (the first is at its start).
CALL_LOG_UPKEEP_SECONDS = 3_600

#: Lines one page of a dashboard list shows (the Tools screen, the Calls page).
DASHBOARD_PAGE_SIZE = 50
#: Matches a project's pins page lists for its search at once (more: a link to the next ones).
PIN_SEARCH_PAGE_SIZE = 20
#: The most records one read of the call log or the audit trail returns (the API's `limit` at most).
MAX_PAGE = 500
#: The most calls the Calls page counts for its filters: past it, it says "more than 10,000". A count is a walk of at
#: most this many index entries, never of the whole log.
CALL_COUNT_BOUND = 10_000
#: Lines one page of a list of the API (tools, projects, the audit trail) holds when `limit` is not given.
DEFAULT_PAGE = 100
#: The longest search a list takes (`q`): longer than any name or label it is matched against.
MAX_SEARCH_CHARS = 200
#: Characters of an exception's text a failure keeps as its detail (a call's, a model's): enough to name the cause,
#: never a whole body an exception may quote.
ERROR_DETAIL_CHARS = 500

# Bounds on what a model may send, so a hostile value cannot grow a request without limit.
MAX_URL_CHARS = 8_192
MAX_STRING_ARGUMENT_CHARS = 16_384
MAX_ARRAY_ARGUMENT_ITEMS = 1_000
MAX_BODY_BYTES = 262_144

# Bounds on a definition, so a registry write cannot grow without limit.
MAX_TOOL_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 4_096
MAX_DISPLAY_NAME_CHARS = 200
MAX_ENTITLEMENT_CHARS = 200
MAX_PARAMETERS = 64
MAX_REQUEST_BYTES = 1_048_576

# Shaping what the model sees (issue 39, docs/shaping.md).
#: The raw 2xx body a tool with a response shape may send, in bytes after its Content-Encoding is undone
#: (TOOLGATE_MAX_SHAPED_RESPONSE_BYTES changes it): the shape's result, not the body, must then fit the cap.
MAX_SHAPED_RESPONSE_BYTES = 1_048_576
#: The longest response shape (a JMESPath expression) a definition holds.
MAX_RESPONSE_SHAPE_CHARS = 1_000
#: Top-level fields of an error body a tool may let the model read, and the characters each value keeps.
MAX_ERROR_FIELDS = 16
ERROR_FIELD_VALUE_CHARS = 200
#: The most of an error body read to find those fields; a larger one gives no details (still `refused`).
MAX_ERROR_BODY_BYTES = 65_536
#: Outcome messages one tool holds at most, and the characters each sentence may have.
MAX_OUTCOME_MESSAGES = 32
MAX_OUTCOME_MESSAGE_CHARS = 300

# Importing an OpenAPI document (service/importing).
#: The largest OpenAPI document an import reads, in bytes, however it arrives. A pasted or uploaded document also
#: rides in a request body, which TOOLGATE_MAX_REQUEST_BYTES (1 MiB by default) bounds first with a 413; a larger
#: one is imported from its address (`url`), fetched by the service up to this size. Parsing runs on the worker's
#: own time, so this also bounds how long one import holds it (bench/importing.py measures it).
MAX_IMPORT_DOCUMENT_BYTES = 4_194_304
#: The most values (each scalar, list and mapping; a YAML alias counted again at every use) a document may expand
#: to, and the deepest it may nest: a billion-laughs document is refused before anything walks it. Mapping its
#: operations spends from the same count: each `$ref` followed, each `allOf`/`oneOf`/`anyOf` part and each entry it
#: merges (service/importing/bounds.py). A reference is expanded once per document and reused, so a real document
#: adds a few per field it maps (500 operations: 2,752 over their own 26,357 values); a few kilobytes whose
#: references each merge several others stand for billions, and are refused at this count (bench/import_bomb.py).
MAX_IMPORT_DOCUMENT_VALUES = 1_000_000
MAX_IMPORT_DOCUMENT_DEPTH = 100
#: The most operations one import maps; a document with more is refused whole rather than cut short.
MAX_IMPORT_OPERATIONS = 1_000
#: The most `$ref` hops followed to reach one value; a longer chain is refused as if it looped.
MAX_IMPORT_REF_HOPS = 32
#: The longest display name an import makes from an operation's summary, cut at a word: a name for a table row, the
#: whole summary staying in the description.
MAX_IMPORTED_DISPLAY_NAME_CHARS = 60
#: How long reading and mapping one document may take, past which it is refused as too complex. The largest YAML
#: document an import takes reads in about 4 s (bench/importing.py), so this is not the bound a hostile document
#: meets first: the count of values is. It holds whatever that count does not see.
IMPORT_DEADLINE_SECONDS = 10.0
# Bounds on whole numbers and text that reach the database, so a request past them is refused, never an overflow.
#: The largest value of an INTEGER column on PostgreSQL (SQLite's hold more): version numbers and audit sequence
#: numbers. A number past it names nothing stored: in a path 404, in a field 422, never an overflow 500.
MAX_STORED_INTEGER = 2_147_483_647
#: The largest row id (BIGSERIAL on PostgreSQL, INTEGER on SQLite): call ids, which the call log pages by.
MAX_ROW_ID = 9_223_372_036_854_775_807
#: A session token's subject, at most this many characters: it is filled into a path segment, a query value or a
#: body, and names whose conversations are whose.
MAX_SUBJECT_CHARS = 256

#: Pins one project version holds at most. Saving and publishing look up every pin, so the count bounds that work
#: (a draft of 10,000 pins held a worker for 7 s); far more tools than a model is offered at once.
MAX_PINS = 500

#: Problems one refusal lists at most: the last of them then says the list was cut, so an answer stays small however
#: broken the input (a 1 MiB body of unknown fields is tens of thousands of them).
MAX_VIOLATIONS = 100

# An organization's own identity providers (service/identity).
#: The longest lifetime (`exp` - `iat`) a provider's access token may claim. Longer than a session token's: Okta and
#: Entra ID issue tokens of an hour or so, and Auth0's APIs a day by default; a token claiming more is refused.
PROVIDER_TOKEN_MAX_SECONDS = 86_400
#: A provider's access token is refused unread past this many characters (Entra ID's carry groups: a few KiB).
MAX_PROVIDER_TOKEN_CHARS = 16_384
#: The largest discovery document or key set read from a provider; the read stops there.
MAX_PROVIDER_DOCUMENT_BYTES = 262_144
#: One deadline over resolving, connecting and reading a provider's discovery document or key set.
PROVIDER_FETCH_DEADLINE_SECONDS = 5.0
#: How long a fetched key set is used before it is fetched again.
PROVIDER_KEY_SET_LIFETIME_SECONDS = 300
#: After a key-set fetch, a token naming an unknown `kid` waits this long before it may cause another: a burst of
#: forged kids costs the provider at most one fetch per cooldown. A failed fetch also waits out the cooldown.
PROVIDER_KEY_SET_COOLDOWN_SECONDS = 30
#: The most keys read from one key set, and the most identity providers one organization trusts.
MAX_PROVIDER_KEYS = 50
MAX_IDENTITY_PROVIDERS = 20

#: Tools one page of a project server's `tools/list` holds at most (TOOLGATE_MCP_PAGE_SIZE changes it); a project
#: pins at most MAX_PINS, so a client reads any project in a few pages.
MCP_TOOLS_PAGE_SIZE = 100
#: While a `tools/call` waits for the person's answer to its elicitation, how often it reads the approval row, which
#: another instance may have decided (one in this process wakes it at once).
MCP_DECISION_POLL_SECONDS = 1.0
#: Project-server sessions a process remembers (service/mcp/project_session.py): verified session ids, and the
#: conversations' rows, read once. Every request still asks the database whether its session ended.
MAX_KNOWN_MCP_SESSIONS = 10_000
