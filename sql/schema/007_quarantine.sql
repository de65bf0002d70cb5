-- Spool lines the flush could not store as rows: undecodable JSON, a torn tail left by a
-- crash, or a row DuckDB refuses even after out-of-range numbers were set to NULL.
-- They are kept here verbatim (visible, counted by `nerfwatch status`) instead of
-- blocking the rows spooled after them, and instead of a file on the spool's disk,
-- which may be the disk that is full.
CREATE TABLE quarantined_rows (
    line_hash          VARCHAR PRIMARY KEY,      -- sha256 of the line: replays add nothing
    quarantined_at     TIMESTAMPTZ NOT NULL,
    run_id             VARCHAR,                  -- when the line could be decoded
    reason             VARCHAR NOT NULL,         -- torn_tail | invalid_json | rejected: <error>
    segment            VARCHAR,                  -- spool file the line came from
    line               VARCHAR NOT NULL
);
