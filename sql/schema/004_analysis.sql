-- Analysis results. Every `nerfwatch analyze` run gets an id; every result row carries it,
-- so runs can be compared and re-run without overwriting history. "Latest" views below
-- pick the newest finished run.
CREATE TABLE analysis_runs (
    analysis_id        VARCHAR PRIMARY KEY,          -- UUIDv7
    started_at         TIMESTAMPTZ NOT NULL,
    finished_at        TIMESTAMPTZ,
    status             VARCHAR NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running', 'done', 'failed')),
    since              TIMESTAMPTZ,                  -- data window analyzed
    until              TIMESTAMPTZ,
    params             JSON,
    nerfwatch_version  VARCHAR,
    detail             VARCHAR
);

-- Seasonality per series: method used, strength and whether the rhythm is significant.
CREATE TABLE seasonality (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    metric          VARCHAR NOT NULL,                -- ttft_p50_ms, ...
    context_class   VARCHAR,
    method          VARCHAR NOT NULL,                -- mstl | stl | none
    n_hours         INTEGER,
    peak_to_trough  DOUBLE,                          -- ratio of hour-of-week profile max/min
    peak_hours      INTEGER[],                       -- hours of day (UTC) at the top
    pvalue          DOUBLE,
    significant     BOOLEAN,
    detail          VARCHAR
);

-- Hour-of-week profile (0 = Monday 00:00 UTC ... 167), multiplicative on the metric.
CREATE TABLE hour_of_week (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    metric          VARCHAR NOT NULL,
    context_class   VARCHAR,
    how             INTEGER NOT NULL,
    value           DOUBLE,
    n               INTEGER
);

-- Confirmed change points on deseasonalized series.
CREATE TABLE change_points (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    metric          VARCHAR NOT NULL,
    context_class   VARCHAR,
    "at"            TIMESTAMPTZ NOT NULL,
    level_before    DOUBLE,
    level_after     DOUBLE,
    effect          DOUBLE,                          -- relative change (after/before - 1)
    effect_lo       DOUBLE,
    effect_hi       DOUBLE,
    pvalue          DOUBLE,
    detector        VARCHAR NOT NULL,                -- offline | online
    detected_at     TIMESTAMPTZ                      -- online: when the alarm would have fired
);

-- Degradation phases per provider, mapped to the stage users describe.
CREATE TABLE phases (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    phase_no        INTEGER NOT NULL,
    label           VARCHAR NOT NULL CHECK (label IN ('stable', 'degraded', 'recovering')),
    stage           VARCHAR NOT NULL,                -- stable | subtle_degradation |
                                                     -- long_context_issues | major_degradation | recovery
    start_at        TIMESTAMPTZ NOT NULL,
    end_at          TIMESTAMPTZ,                     -- NULL while ongoing
    severity        DOUBLE,                          -- effect size (relative TTFT change)
    severity_lo     DOUBLE,
    severity_hi     DOUBLE,
    confidence      DOUBLE,                          -- 0..1
    signals         VARCHAR[],                       -- which metrics moved
    start_lo        TIMESTAMPTZ,                     -- 95 % interval of a dated onset
    start_hi        TIMESTAMPTZ                      -- (flat-ramp-flat fit; else NULL)
);

-- Per-day probability that a provider is in a degraded regime.
CREATE TABLE degraded_probability (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    day             DATE NOT NULL,
    p_degraded      DOUBLE
);

-- The five warning signs, each a recent window tested against a baseline.
CREATE TABLE warning_signs (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    sign            VARCHAR NOT NULL,                -- long_context_slower | more_busy_errors |
                                                     -- dumber_answers | reduced_rate_limits |
                                                     -- no_official_word
    window_start    TIMESTAMPTZ,
    window_end      TIMESTAMPTZ,
    baseline_start  TIMESTAMPTZ,
    baseline_end    TIMESTAMPTZ,
    effect          DOUBLE,
    effect_lo       DOUBLE,
    effect_hi       DOUBLE,
    pvalue          DOUBLE,
    qvalue          DOUBLE,                          -- Benjamini-Hochberg adjusted
    fires           BOOLEAN NOT NULL,
    persistent      BOOLEAN,
    test            VARCHAR,                         -- which test produced the p-value
    detail          VARCHAR
);

-- Release-cycle view: each release joined with the degradation onset before it.
CREATE TABLE release_cycles (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    vendor          VARCHAR,
    release_model   VARCHAR,
    release_date    DATE NOT NULL,
    onset_at        TIMESTAMPTZ,                     -- start of the degradation before it
    lead_days       DOUBLE                           -- release_date - onset
);

-- Event study: metric trajectory around each release (day offsets -120..60).
CREATE TABLE event_study (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    vendor          VARCHAR,
    release_date    DATE NOT NULL,
    metric          VARCHAR NOT NULL,
    day_offset      INTEGER NOT NULL,
    value           DOUBLE,
    relative        DOUBLE                           -- value / pre-period baseline
);

-- Tests of the release-cycle hypothesis (permutation test, synchronization, ...).
CREATE TABLE cycle_tests (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR,                         -- NULL for cross-provider tests
    test            VARCHAR NOT NULL,
    statistic       DOUBLE,
    pvalue          DOUBLE,
    n               INTEGER,
    detail          VARCHAR
);

-- Forecast window for the next release while a degradation phase is ongoing.
CREATE TABLE release_forecasts (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    vendor          VARCHAR,
    expected_date   DATE,
    window_lo       DATE,
    window_hi       DATE,
    conclusive      BOOLEAN NOT NULL,
    basis           VARCHAR                          -- what the forecast rests on, in words
);

-- Vendor-wide incidents: several models or endpoints of one vendor degrading together.
CREATE TABLE vendor_incidents (
    analysis_id     VARCHAR NOT NULL,
    vendor          VARCHAR NOT NULL,
    start_at        TIMESTAMPTZ NOT NULL,
    end_at          TIMESTAMPTZ,
    providers       VARCHAR[],
    detail          VARCHAR
);
