-- The probe daemon's own record: when it ran, why it stopped, and the alerts it sent.
-- A gap in probe_results with no daemon session covering it means "not measured" (the
-- daemon was down), never "the provider was down". A session without stopped_at whose
-- last heartbeat is old ended in a crash around last heartbeat.
CREATE TABLE daemon_events (
    event_id           VARCHAR PRIMARY KEY,      -- UUIDv7
    session_id         VARCHAR NOT NULL,         -- one per daemon start
    occurred_at        TIMESTAMPTZ NOT NULL,
    kind               VARCHAR NOT NULL
                       CHECK (kind IN ('start', 'heartbeat', 'reload', 'reload_failed', 'stop')),
    detail             VARCHAR,                  -- stop reason, reload error, job count ...
    host               VARCHAR,
    pid                INTEGER,
    nerfwatch_version  VARCHAR
);

CREATE INDEX daemon_events_session ON daemon_events (session_id, occurred_at);

-- Alerts sent to webhooks (health alerts open/resolve, phase changes, report links).
-- The last triggered/resolved event per provider is the alert state a restart resumes.
CREATE TABLE alert_events (
    event_id           VARCHAR PRIMARY KEY,      -- UUIDv7
    occurred_at        TIMESTAMPTZ NOT NULL,
    provider           VARCHAR,                  -- NULL for report links
    kind               VARCHAR NOT NULL
                       CHECK (kind IN ('triggered', 'resolved', 'phase', 'report')),
    title              VARCHAR NOT NULL,
    detail             JSON,
    delivered          INTEGER NOT NULL          -- webhooks that accepted it
);
