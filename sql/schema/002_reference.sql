-- The release calendar and documented incidents. `origin` says where a row came from:
-- bundled (shipped with nerfwatch), user (nerfwatch releases add/import) or synthetic
-- (planted by the simulator's scenario, never mixed into live conclusions).
CREATE TABLE releases (
    vendor        VARCHAR NOT NULL,
    model         VARCHAR NOT NULL,
    release_date  DATE NOT NULL,
    kind          VARCHAR NOT NULL DEFAULT 'major',   -- major | minor | open-weights | ...
    source_url    VARCHAR,
    confidence    VARCHAR NOT NULL DEFAULT 'medium'
                  CHECK (confidence IN ('high', 'medium', 'low')),
    origin        VARCHAR NOT NULL DEFAULT 'user'
                  CHECK (origin IN ('bundled', 'user', 'synthetic')),
    PRIMARY KEY (vendor, model, release_date)
);

CREATE TABLE incidents (
    vendor        VARCHAR NOT NULL,
    start_date    DATE NOT NULL,
    end_date      DATE,
    summary       VARCHAR NOT NULL,
    source_url    VARCHAR,
    origin        VARCHAR NOT NULL DEFAULT 'user'
                  CHECK (origin IN ('bundled', 'user', 'synthetic')),
    PRIMARY KEY (vendor, start_date, summary)
);
