"""``nerfwatch status`` on a spool folder that refuses both the delete of a flushed
segment and its stored mark (a read-only folder): the daemon remembers the segment as
stored, status (another process) asks the warehouse."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.spool import Spool
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Warehouse
from tests.support.daemon import make_config
from tests.test_spool_damage import _immutable, _row, _segment


def test_status_does_not_count_a_stored_segment_a_read_only_folder_kept(tmp_path: Path) -> None:
    """Status said 3 rows waited where 1 did: the stored segment's probe row and its
    damaged line (quarantined by the flush) were counted, and its damaged line named as
    one for the next flush. A row appended after the flush still counts."""
    config = make_config(tmp_path)
    directory = config.warehouse.spool_dir
    directory.mkdir(parents=True)
    _segment(directory, 1).write_text(_row().to_json() + "\nnot json\n", encoding="utf-8")
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, SegmentWriter(Warehouse(config.warehouse.path), directory))
    try:
        with _immutable(directory):
            outcome = flusher.flush_once()
            asyncio.run(spool.append(_row().to_json()))  # into the open segment: waiting
            assert outcome.error is None and _segment(directory, 1).exists()
            assert list(directory.glob("*.stored")) == []  # the folder took no mark
            assert spool.depth() == 1  # the daemon's own figure
            status = gather_status(config, lock_wait_s=5)
    finally:
        flusher.close()
        spool.close()
    assert status.warehouse_error is None
    assert status.spool_depth == 1
    assert not [n for n in status.notes if "damaged" in n], status.notes
