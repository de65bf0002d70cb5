-- probe_results without indexes (its primary key on run_id and the (provider, started_at)
-- index of 001). DuckDB rewrites an ART index at every checkpoint, so with them each flush
-- of the daemon cost more the longer the history grew: a 500-row flush took 79 ms of CPU
-- with 2 M rows stored, against 15 ms without them. Queries never needed them (DuckDB
-- prunes by zone maps, which stay). run_id stays unique because every writer inserts
-- through pipeline.warehouse.insert_new_sql, an anti-join against the rows on or after
-- the batch's earliest started_at (each copy of a result carries the same started_at).
--
-- The table is rebuilt: DuckDB cannot drop a primary key in place. Views bind by name
-- and survive the rename.
CREATE TABLE probe_results_006 (
    run_id                 VARCHAR NOT NULL,         -- UUIDv7: unique (writers check it)
    started_at             TIMESTAMPTZ NOT NULL,     -- wall time the request was sent (UTC)
    source                 VARCHAR NOT NULL DEFAULT 'live'
                           CHECK (source IN ('live', 'synthetic')),
    probe_site             VARCHAR,                  -- where the prober ran (hostname or label)
    run_status             VARCHAR NOT NULL DEFAULT 'done'
                           CHECK (run_status IN ('done', 'skipped', 'aborted')),
    skip_reason            VARCHAR,                  -- overrun | budget | shutdown | misfire | ...

    -- what was probed
    provider               VARCHAR NOT NULL,         -- the config's provider name
    vendor                 VARCHAR,                  -- company, for the release calendar join
    model                  VARCHAR NOT NULL,         -- the model asked for
    reported_model         VARCHAR,                  -- the model the response says served it
    endpoint               VARCHAR,                  -- base URL, never with credentials
    wire_format            VARCHAR,                  -- openai | anthropic
    plan                   VARCHAR,                  -- plan / tier label from the config
    probe                  VARCHAR NOT NULL,         -- the config's probe name
    task_family            VARCHAR NOT NULL,
    task_version           INTEGER,                  -- generator version of the family
    seed                   BIGINT,
    context_class          VARCHAR,                  -- short | long
    context_target_tokens  INTEGER,                  -- the size the prompt was built for
    max_output_tokens      INTEGER,
    temperature            DOUBLE,
    streamed               BOOLEAN,

    -- timings (ms from request sent, monotonic clock)
    headers_ms             DOUBLE,                   -- response headers received
    ttft_ms                DOUBLE,                   -- first token of any kind (reasoning included)
    first_answer_ms        DOUBLE,                   -- first answer (non-reasoning) token
    last_token_ms          DOUBLE,
    total_ms               DOUBLE,                   -- stream closed or failure detected
    itl_p50_ms             DOUBLE,                   -- inter-token (inter-chunk) gaps
    itl_p95_ms             DOUBLE,
    itl_max_ms             DOUBLE,
    output_tokens_per_s    DOUBLE,                   -- provider token count, first chunk excluded
    chunks                 INTEGER,                  -- content-bearing stream events
    connection_reused      BOOLEAN,

    -- usage as the provider reported it
    input_tokens           INTEGER,                  -- the actual context size
    output_tokens          INTEGER,
    cached_tokens          INTEGER,
    reasoning_tokens       INTEGER,
    cost_usd               DOUBLE,

    -- outcome
    http_status            INTEGER,
    error_class            VARCHAR,                  -- see probes/errors.py; NULL when not attempted
    error_code             VARCHAR,                  -- provider's own code (body or event)
    error_detail           VARCHAR,                  -- short human text, secrets scrubbed
    finish_reason          VARCHAR,
    request_id             VARCHAR,

    -- rate limits (typed) and every other response header (JSON, no auth/cookies)
    rl_requests_limit      BIGINT,
    rl_requests_remaining  BIGINT,
    rl_requests_reset_s    DOUBLE,
    rl_tokens_limit        BIGINT,
    rl_tokens_remaining    BIGINT,
    rl_tokens_reset_s      DOUBLE,
    retry_after_s          DOUBLE,
    response_headers       JSON,

    -- quality
    expected_answer        VARCHAR,
    extracted_answer       VARCHAR,
    score_strict           VARCHAR CHECK (score_strict IN ('correct', 'wrong', 'unparseable')),
    score_lenient          VARCHAR CHECK (score_lenient IN ('correct', 'wrong', 'unparseable')),
    sanity_flags           VARCHAR[],                -- empty, truncated, wrong_script, ...
    response_text          VARCHAR,                  -- verbatim, untrusted
    reasoning_text         VARCHAR,

    nerfwatch_version      VARCHAR
);

INSERT INTO probe_results_006 SELECT * FROM probe_results;
DROP TABLE probe_results;
ALTER TABLE probe_results_006 RENAME TO probe_results;
