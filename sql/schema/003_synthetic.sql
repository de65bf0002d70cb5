-- Ground truth planted by the simulator (nerfwatch simulate history). Synthetic probe rows
-- live in probe_results with source = 'synthetic'; these tables say what the scenario put
-- into them, so analysis can be scored against it. Live conclusions never read them.

-- One row per scenario phase and provider: when it ran and the multipliers it applied
-- (after the history's step_scale). end_at is the next phase's start (or the timeline's
-- end). During the first ramp_days of a phase its values blend linearly from the previous.
CREATE TABLE synthetic_phases (
    scenario           VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    vendor             VARCHAR,
    phase_index        INTEGER NOT NULL,     -- order within the provider's timeline
    stage              VARCHAR NOT NULL
                       CHECK (stage IN ('stable', 'subtle', 'long_context', 'major',
                                        'release', 'recovery')),
    start_at           TIMESTAMPTZ NOT NULL,
    end_at             TIMESTAMPTZ NOT NULL,
    ramp_days          DOUBLE,
    latency_short      DOUBLE,               -- TTFT multiplier, short context
    latency_long       DOUBLE,               -- TTFT multiplier, long context
    speed              DOUBLE,               -- output-speed multiplier
    error_multiplier   DOUBLE,               -- every error kind
    error_multipliers  JSON,                 -- per error kind, on top (already multiplied in)
    wrong_multiplier   DOUBLE,
    quantized          DOUBLE,               -- extra wrong probability on hard families
    wrong_script_rate  DOUBLE,
    rate_limit         DOUBLE,               -- advertised rate-limit multiplier
    PRIMARY KEY (scenario, provider, phase_index)
);

-- One row per `simulate history` run: the window, seed and generator options used.
CREATE TABLE synthetic_runs (
    scenario      VARCHAR NOT NULL,
    generated_at  TIMESTAMPTZ NOT NULL,
    seed          BIGINT,
    start_at      TIMESTAMPTZ NOT NULL,       -- first probe slot of the history
    end_at        TIMESTAMPTZ NOT NULL,       -- last probe slot
    scenario_start TIMESTAMPTZ NOT NULL,      -- day 0 of the scenario timeline
    row_count     BIGINT NOT NULL,
    options       JSON,                       -- HistoryOptions as used
    PRIMARY KEY (scenario, generated_at)
);
