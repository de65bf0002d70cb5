"""Helpers every command shares: where the warehouse is, and how a failure is printed."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NoReturn

import typer

from pipeline.commands.new_folders import note_folder, note_parent
from pipeline.config import Config, ConfigError, ProviderConfig, load_config
from pipeline.config.checker import did_you_mean
from pipeline.config.user_paths import HomeUnknown, expand_home, name_too_long, stray_space
from pipeline.warehouse import Lake, Warehouse

__all__ = [
    "CONFIG_OPTION",
    "DB_OPTION",
    "DEFAULT_CONFIG",
    "DEFAULT_DB",
    "cannot_write",
    "config_if_any",
    "existing_warehouse",
    "expand_home_option",
    "fail",
    "load_or_fail",
    "missing_warehouse",
    "provider_or_fail",
    "refuse_a_missing_name_with_a_space",
    "require_warehouse",
    "warehouse_from",
    "warehouse_location",
    "warehouse_path",
]

DEFAULT_CONFIG = Path("nerfwatch.toml")
DEFAULT_DB = Path("nerfwatch-data/nerfwatch.duckdb")
LOCK_WAIT_ENV = "NERFWATCH_LOCK_WAIT_S"


def expand_home_option(value: Path | None) -> Path | None:
    """A path option's value with ``~`` expanded (``pipeline.config.user_paths``): the
    shell leaves ``--out=~/r`` and a quoted ``'~/r'`` as written. Every path option uses
    it as its ``callback``."""
    if value is None:
        return None
    try:
        return expand_home(value)
    except HomeUnknown as exc:
        raise typer.BadParameter(str(exc)) from None


CONFIG_OPTION = typer.Option(
    None,
    "--config",
    "-c",
    help="Config file (default: ./nerfwatch.toml if present).",
    callback=expand_home_option,
)
DB_OPTION = typer.Option(
    None,
    "--db",
    callback=expand_home_option,
    help="Warehouse file; overrides the config (default: the config's, else "
    "nerfwatch-data/nerfwatch.duckdb).",
)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one line to stderr and exit: 2 for bad input, 1 for other failures."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


# an output path the user chose that cannot be written: their input, so exit status 2
_PATH_FAULTS = (
    FileExistsError,
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    PermissionError,
)


def cannot_write(option: str, target: Path, exc: OSError) -> NoReturn:
    """Exit naming the option and the path it could not write: status 2 when the path is
    wrong (a missing folder, a file in the way, no permission), 1 when the system failed
    (a full disk, an I/O error). The path is the user's, never a temporary file's."""
    reason = exc.strerror or type(exc).__name__
    fail(f"{option}: cannot write {target}: {reason}", 2 if isinstance(exc, _PATH_FAULTS) else 1)


def refuse_a_missing_name_with_a_space(path: Path | None) -> None:
    """Exit 2 if the input file ``path`` is missing and its name has a stray space: the
    reader's 'No such file or directory' does not show the space."""
    if path is None or os.path.lexists(path):
        return
    space = stray_space(path)
    if space:
        fail(f"{path}: file not found ({space})", 2)


def load_or_fail(path: Path | None, *, check_env: bool = True) -> Config:
    """Load the given config (or ./nerfwatch.toml); bad input exits with status 2."""
    try:
        cfg = load_config(path or DEFAULT_CONFIG, check_env=check_env)
    except ConfigError as exc:
        fail(str(exc), 2)
    _note_folders_of(cfg)
    return cfg


def _note_folders_of(cfg: Config) -> None:
    """Note the config's missing folders: a command failing after it created them
    removes them again (``pipeline.commands.new_folders``)."""
    note_parent(cfg.warehouse.path)
    note_folder(cfg.warehouse.spool_dir)
    note_folder(cfg.report.out_dir)
    if cfg.warehouse.lake is not None:
        for folder in cfg.warehouse.lake.local_paths():
            note_folder(folder)


def provider_or_fail(cfg: Config, name: str) -> ProviderConfig:
    """The configured provider ``name`` with its key set, or exit 2 saying what is wrong."""
    try:
        chosen = cfg.provider(name)
    except KeyError:
        names = [p.name for p in cfg.providers]
        hint = did_you_mean(name, names)
        fail(f"{cfg.path}: unknown provider {name!r} (configured: {', '.join(names)}){hint}", 2)
    if chosen.api_key_env and not chosen.api_key():
        fail(f"environment variable {chosen.api_key_env} (API key of {name}) is not set", 2)
    return chosen


def config_if_any(config: Path | None) -> Config | None:
    """The config a command that can run without one reads: --config, else
    ./nerfwatch.toml if present, else None. Its API keys need not be set."""
    if config is not None or DEFAULT_CONFIG.exists():
        return load_or_fail(config, check_env=False)
    return None


def warehouse_path(config: Path | None, db: Path | None) -> tuple[Path, str]:
    """The warehouse file a command should use, and where that choice came from (for
    errors): --db, else the config's ``warehouse.path``, else the default."""
    if db is not None:
        return db, "--db"
    return _warehouse_file(config_if_any(config))


def _warehouse_file(cfg: Config | None) -> tuple[Path, str]:
    """The config's warehouse file and where it is named, else the default."""
    if cfg is None:
        return DEFAULT_DB, "default warehouse"
    return cfg.warehouse.path, f"{cfg.path}: warehouse.path"


def drift_dir(config: Path | None, db: Path | None) -> Path:
    """Where ``nerfwatch drift`` keeps accepted baselines and ``analyze`` reads them: the
    folder of the warehouse file (``WarehouseConfig.drift_dir``; --db's folder if given)."""
    return warehouse_path(config, db)[0].parent


def warehouse_location(config: Path | None, db: Path | None) -> tuple[Path | Lake, str]:
    """Like ``warehouse_path``, but a config with ``backend = "ducklake"`` gives its lake.

    A --db the shell did not expand (``--db=~/x.duckdb``, quoted ``'~/x'``) is expanded
    here: taken as written, a writing command created a folder named ``~``. A folder or a
    file that is not DuckDB's is refused in one line (exit 2), before anything opens it."""
    if db is not None:
        db = expand_home_option(db) or db  # also when called from Python, not the CLI
        _refuse_not_a_warehouse_file(db, "--db")
        note_parent(db)
        return db, "--db"
    cfg = config_if_any(config)
    if cfg is not None and cfg.warehouse.lake is not None:
        return cfg.warehouse.lake, f"{cfg.path}: warehouse.catalog"
    path, origin = _warehouse_file(cfg)
    _refuse_not_a_warehouse_file(path, origin)
    note_parent(path)
    return path, origin


def warehouse_from(config: Path | None, db: Path | None) -> Warehouse:
    """The warehouse a writing command uses (created with its folders if missing).

    ``NERFWATCH_LOCK_WAIT_S`` sets how long to wait for another process's lock (default 10).
    """
    return _open(warehouse_location(config, db)[0])


def existing_warehouse(config: Path | None, db: Path | None) -> Warehouse:
    """The warehouse a reading command uses; a missing file exits with status 2.

    Opening a missing DuckDB file would create an empty warehouse (and its folders), so a
    mistyped path would quietly answer from nothing.
    """
    location, origin = warehouse_location(config, db)
    require_warehouse(location, origin)
    return _open(location)


_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


def _refuse_not_a_warehouse_file(path: Path, origin: str) -> None:
    """Exit 2 if ``path`` is a folder, a name the file system cannot hold (too long), an
    empty file, or a file DuckDB did not write (a CSV, the config): DuckDB's own error said
    'IO Error' and exited 1, as if the system failed, and a name too long was a traceback.

    An empty file (``touch x.duckdb``) is refused, not taken for a new warehouse: DuckDB
    refuses to open it, and replacing a file the user made is not ours to do."""
    too_long = name_too_long(path)
    if too_long:
        fail(f"{origin}: {path}: {too_long}", 2)
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return  # missing: a writer creates it, a reader says it is missing
    except OSError as exc:
        fail(f"{origin}: {path}: {exc.strerror or exc}", 2)
    if path.is_dir():
        fail(f"{origin}: {path} is a folder, not a warehouse file", 2)
    try:
        with path.open("rb") as handle:
            head = handle.read(12)
    except OSError:
        return  # unreadable: the command says so where it opens the file
    if not head:
        fail(
            f"{origin}: {path} is an empty file, not a DuckDB warehouse file "
            "(remove it to start a new warehouse there)",
            2,
        )
    if head[8:12] != _DUCKDB_MAGIC:
        fail(f"{origin}: {path} is not a DuckDB warehouse file", 2)


def require_warehouse(location: Path | Lake, origin: str) -> None:
    """Exit 2 unless a warehouse exists at ``location`` (``origin``: where it was named)."""
    if isinstance(location, Lake):
        if not location.catalog_exists():
            missing_warehouse(location.where, origin)
    elif not location.is_file():
        missing_warehouse(location, origin)


def missing_warehouse(path: Path | str, origin: str) -> NoReturn:
    """Exit 2 naming the missing warehouse file and where its path came from; a stray
    space in its name is pointed at (it is invisible in the message)."""
    space = stray_space(path) if isinstance(path, Path) else ""
    if space:
        fail(f"{origin}: no warehouse at {str(path)!r} ({space})", 2)
    fail(
        f"{origin}: no warehouse at {path} (reading commands never create one; "
        "`nerfwatch run`, `probe` or `demo` do)",
        2,
    )


def _open(location: Path | Lake) -> Warehouse:
    return Warehouse(location, lock_wait_s=_lock_wait_s())


def _lock_wait_s() -> float:
    """``NERFWATCH_LOCK_WAIT_S`` (default 10), refused unless a finite number >= 0: a
    typo there (``abc``, ``nan``, ``-5``) must not silently become the wait."""
    text = os.environ.get(LOCK_WAIT_ENV, "10")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        fail(
            f"environment variable {LOCK_WAIT_ENV}: expected a finite number of seconds >= 0, "
            f"got {text!r}",
            2,
        )
    return seconds
