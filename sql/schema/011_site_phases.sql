-- Probe sites side by side (several `nerfwatch run` daemons writing into one lake): the
-- phases of each (provider, site) series on its own, and whether each degradation was
-- regional or provider-wide (pipeline/analysis/site_rows.py, site_scope.py). Written only
-- when the analysed rows come from two sites or more; `phases` stays pooled over sites.
CREATE TABLE site_phases (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    probe_site      VARCHAR NOT NULL,
    phase_no        INTEGER NOT NULL,
    label           VARCHAR NOT NULL,                -- stable | degraded | recovering
    stage           VARCHAR NOT NULL,
    start_at        TIMESTAMPTZ NOT NULL,
    end_at          TIMESTAMPTZ,                     -- NULL while ongoing
    severity        DOUBLE,
    severity_lo     DOUBLE,
    severity_hi     DOUBLE,
    confidence      DOUBLE,
    signals         VARCHAR[],
    start_lo        TIMESTAMPTZ,
    start_hi        TIMESTAMPTZ
);

CREATE TABLE degradation_scope (
    analysis_id     VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    model           VARCHAR,
    start_at        TIMESTAMPTZ NOT NULL,            -- hours where some site was degraded
    end_at          TIMESTAMPTZ NOT NULL,
    scope           VARCHAR NOT NULL,                -- regional | provider-wide | undecided
    sites           VARCHAR[] NOT NULL,              -- the sites degraded for half of it or more
    n_sites         INTEGER NOT NULL,                -- sites with data in the stretch
    pvalue          DOUBLE,                          -- overlap test; NULL for one site
    test            VARCHAR NOT NULL
);
