"""The DD label store: one DD_LABELS row per deal_id (owner, DD table, par for all 16 dealer x
vulnerability, solver and version), how it lies on disk, how it is read and how rows are made.

A store folder holds `labels/`: `part-*.parquet` files committed batch by batch while solving and
compacted into few large `shard-*.parquet` (LabelStore). A crash can leave a committed deal in two
files (never in none): `read_labels` keeps one row per deal_id, an exact ("dds") row over an
estimate ("nn-dda"). Written by `pipelines.ddlabel`, read by the trainers, the evaluator and the
catalog.

Frozen versions (`freeze`) are what the repository ships: the exact labels of deals we generated,
one file per version named by its hash, with a `source` column, readable like any store folder.
Versions frozen since 2026-12-04 are compact (FROZEN_COMPACT_SCHEMA): owner and table only, 19
bytes a deal instead of 34, since deal_id is a hash of the owner and par a function of the table;
`read_label_file` derives deal_id and leaves par null, which ddlabel fills when it copies a row."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .atomic import write_bytes
from .dd import SOLVER_NAME
from .digests import sha256_digest
from .encodings import deal_id
from .errors import existing
from .schema import DD_LABELS, PARQUET_OPTIONS
from .scoring import par_all

ESTIMATOR_NAME = "nn-dda"  # the solver column of rows labelled by the network (ddlabel --estimator nn)


class LabelStore:
    """`<root>/labels/`: parts committed while solving, shards after compaction.

    Compaction is made safe against a kill at any moment by a journal: new shards are written
    under temporary names, then the journal naming them and the files they replace is committed
    by a rename, then it is applied (rename shards in, delete the old files). `recover` applies a
    journal left by a kill and removes temporary files of writers that died."""

    JOURNAL = ".compaction.json"

    def __init__(self, root: str | Path):
        self.dir = Path(root) / "labels"

    def files(self) -> list[Path]:
        return sorted(self.dir.glob("*.parquet"))

    def parts(self) -> list[Path]:
        return [path for path in self.files() if not path.name.startswith("shard-")]

    def small_shards(self, rows_per_shard: int) -> list[Path]:
        return [path for path in self.files() if path.name.startswith("shard-")
                and pq.ParquetFile(path).metadata.num_rows < rows_per_shard // 2]

    def recover(self) -> None:
        """Finish an interrupted compaction; drop temporary files (call with no writer running)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        journal = self.dir / self.JOURNAL
        if journal.exists():
            self._apply(json.loads(journal.read_text()))
        for stray in self.dir.glob(".*"):
            stray.unlink()

    def compact(self, inputs: list[Path], rows_per_shard: int) -> list[Path]:
        """Merge `inputs` into shards of at most `rows_per_shard` rows (one row per deal_id, sorted)."""
        if not inputs:
            return []
        table = dedupe(pa.concat_tables([read_label_file(path) for path in inputs]))
        table = table.sort_by("deal_id")
        token = content_token(table)  # the same labels, the same names: a rerun leaves DVC's hash alone
        new = []
        for index, start in enumerate(range(0, table.num_rows, rows_per_shard)):
            name = f"shard-{token}-{index:04d}.parquet"
            pq.write_table(table.slice(start, rows_per_shard), self.dir / f".{name}.tmp", **PARQUET_OPTIONS)
            new.append(name)
        plan = {"new": new, "old": [path.name for path in inputs]}
        journal = self.dir / self.JOURNAL
        temporary = self.dir / f"{self.JOURNAL}.tmp"
        temporary.write_text(json.dumps(plan))
        os.replace(temporary, journal)  # the commit point
        self._apply(plan)
        return [self.dir / name for name in new]

    def _apply(self, plan: dict) -> None:
        for name in plan["new"]:
            temporary = self.dir / f".{name}.tmp"
            if temporary.exists():
                os.replace(temporary, self.dir / name)
        for name in plan["old"]:
            if name not in plan["new"]:
                (self.dir / name).unlink(missing_ok=True)
        (self.dir / self.JOURNAL).unlink()


def content_token(table: pa.Table) -> str:
    """12 hex digits naming a compaction by what it holds (each deal's id, table and solver)."""
    digest = hashlib.blake2b(digest_size=6)
    digest.update(table.column("deal_id").to_numpy().tobytes())
    digest.update(table.column("dd_tricks").combine_chunks().flatten().to_numpy().tobytes())
    digest.update("\n".join(table.column("solver").to_pylist()).encode())
    return digest.hexdigest()


def read_label_file(path: Path) -> pa.Table:
    """One label file in DD_LABELS' column order and types (a compact frozen version: deal_id
    derived from the owner, par null)."""
    table = pq.read_table(path)
    if "deal_id" not in table.column_names:
        owners = table.column("owner").combine_chunks().flatten().to_numpy().reshape(-1, 52)
        table = table.append_column("deal_id", pa.array([deal_id(owner) for owner in owners], pa.uint64()))
        for name in ("par_score", "par_contracts"):
            table = table.append_column(name, pa.nulls(table.num_rows, DD_LABELS.field(name).type))
    return table.select(DD_LABELS.names).cast(DD_LABELS)


def dedupe(table: pa.Table) -> pa.Table:
    """One row per deal_id: its first exact ("dds") row, else its first row, so an exact label
    supersedes an estimate wherever the two lie."""
    ids = table.column("deal_id").to_numpy()
    estimated = pc.not_equal(table.column("solver"), SOLVER_NAME).to_numpy(zero_copy_only=False)
    order = np.lexsort((np.arange(len(ids)), estimated))  # exact rows first, else file order
    _, first = np.unique(ids[order], return_index=True)
    return table if len(first) == len(ids) else table.take(np.sort(order[first]))


def label_files(store: str | Path) -> list[Path]:
    """The label files of a DD store folder (its labels/, or Parquet files right in it)."""
    store = Path(store)
    if (store / "labels").is_dir():
        return LabelStore(store).files()
    return sorted(store.glob("*.parquet"))


def read_labels(*stores: str | Path) -> pa.Table:
    """All labels of some DD stores, one row per deal_id (an exact row wins over an estimate,
    then the first store that has it)."""
    tables = [read_label_file(path) for store in stores for path in label_files(store)]
    return dedupe(pa.concat_tables(tables)) if tables else DD_LABELS.empty_table()


def exact_rows(table: pa.Table) -> pa.Table:
    """The rows solved by DDS (estimates dropped)."""
    return table.filter(pc.equal(table.column("solver"), SOLVER_NAME))


def par_columns(table: np.ndarray) -> tuple[list[int], list[str]]:
    """Par score (North-South) and contracts for all 16 dealer x vulnerability, index dealer*4+vul,
    from the DD table (never solved again for par)."""
    pars = par_all(np.asarray(table).reshape(4, 5))
    return [par.score for par in pars], [",".join(map(str, par.contracts)) or "pass" for par in pars]


def label_row(deal_id: int, owner: np.ndarray, table: np.ndarray, solver: str, version: str) -> dict:
    scores, contracts = par_columns(table)
    return {
        "deal_id": deal_id, "owner": owner.tolist(), "dd_tricks": table.tolist(),
        "par_score": scores, "par_contracts": contracts, "solver": solver, "solver_version": version,
    }


def dd_store_table(ids: np.ndarray, owners: np.ndarray, tables: np.ndarray, solver: str = "dds",
                   solver_version: str = "oracle files (tables verified equal to DDS)") -> pa.Table:
    """Rows in the DD store's schema, par left null, so oracle deals can stand in for a ddlabel
    run. (pyarrow 25 cannot read a null fixed-size list back from Parquet: read the columns the
    trainer uses, as it does.)"""
    n = len(ids)
    return pa.table({
        "deal_id": pa.array(ids, pa.uint64()),
        "owner": pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(owners, np.int8).ravel()), 52),
        "dd_tricks": pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(tables, np.int8).ravel()), 20),
        "par_score": pa.nulls(n, DD_LABELS.field("par_score").type),
        "par_contracts": pa.nulls(n, DD_LABELS.field("par_contracts").type),
        "solver": pa.array([solver] * n),
        "solver_version": pa.array([solver_version] * n),
    }, schema=DD_LABELS)


# ------------------------------------------------------------------ frozen versions (committed in git)

FROZEN_SCHEMA = DD_LABELS.append(pa.field("source", pa.string(), nullable=False))  # where the deal came from
FROZEN_COMPACT_SCHEMA = pa.schema([FROZEN_SCHEMA.field(name) for name in ("owner", "dd_tricks", "solver", "solver_version", "source")],
                                  metadata=FROZEN_SCHEMA.metadata)  # what freeze writes: the rest is derived
FROZEN_NAME = "dd_labels-{}.parquet"  # {} = the first 12 hex digits of the file's sha256


def freeze(stores: list[str | Path], source: str, out: Path) -> Path | None:
    """The exact labels of `stores` not yet in `out`'s frozen files, as one new compact frozen file
    named by its hash (so a version never changes under its name), rows sorted by deal_id, each
    saying its `source`. Returns the file, or None when every deal is frozen already."""
    frozen = read_labels(out).column("deal_id").to_pylist() if list(out.glob("*.parquet")) else []
    table = exact_rows(read_labels(*stores))
    table = table.filter(pc.invert(pc.is_in(table.column("deal_id"), pa.array(frozen, pa.uint64())))).sort_by("deal_id")
    if not table.num_rows:
        return None
    table = table.append_column("source", pa.array([source] * table.num_rows, pa.string()))
    table = table.select(FROZEN_COMPACT_SCHEMA.names).cast(FROZEN_COMPACT_SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", compression_level=19, row_group_size=PARQUET_OPTIONS["row_group_size"])
    data = sink.getvalue().to_pybytes()
    path = out / FROZEN_NAME.format(sha256_digest(data)[:12])
    write_bytes(path, data)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bridgeflow.dataset.labels",
                                     description="Freeze the exact labels of DD stores into a new committed version.")
    parser.add_argument("--store", action="append", required=True, help="a DD store (ddlabel --out)")
    parser.add_argument("--source", required=True, help="where the deals came from, e.g. the synth command")
    parser.add_argument("--out", type=Path, default=Path("datasets/dd_labels"))
    args = parser.parse_args(argv)
    path = freeze([existing(store, "--store") for store in args.store], args.source, args.out)
    print(f"wrote {path}" if path else f"nothing new: every exact label is frozen in {args.out} already")


if __name__ == "__main__":
    main()
