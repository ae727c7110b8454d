"""The analysts' DuckDB catalog: views over the Parquet shards and bridge macros.

    bridgeflow catalog --records data/ingest/records --quarantine data/ingest/quarantine \
        --dd data/dd --out data/bridge.duckdb

Views point at absolute paths of the shards found when it is built, so the database opens from
any working directory (rebuild it when the data moves or its shards change). Every shard is
checked first (`dataset.shard_check`): one that is not readable Parquet is left out, named in the
log and in the `skipped_shards` table; a folder holding a shard of another schema (a quarantine
shard among the records) is refused with one line naming the odd files, so a count is never wrong. It is written in DuckDB's v1.5.0 storage format so that the `duckdb` CLI from
PyPI (1.5.x) opens it as well as the Python package."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import duckdb

from . import schema
from .atomic import atomic_path
from .errors import InputError, existing, output_file
from .shard_check import checked_shards

LOG = logging.getLogger("bridgeflow.catalog")

# Official IMP scale (Law 78B): the score differences at which each further IMP starts.
IMP_THRESHOLDS = [20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600, 750, 900, 1100, 1300, 1500,
                  1750, 2000, 2250, 2500, 3000, 3500, 4000]

MACROS = f"""
-- Every macro answers NULL for a NULL argument or one outside DESIGN.md's encodings (a seat 9, a
-- 40-card owner), never a plausible number: each guards its arguments with these two helpers.
-- _is_code: x is a whole number in low..high (NULL when x is NULL)
CREATE OR REPLACE MACRO _is_code(x, low, high) AS x BETWEEN low AND high AND x = trunc(x);
-- _all_codes: a list of exactly `size` codes in low..high (owner: 52 seats -1..3, -1 = unknown)
CREATE OR REPLACE MACRO _all_codes(values, size, low, high) AS
    len(values) = size AND len(list_filter(values, lambda v: _is_code(v, low, high))) = size;
-- cards are suit*13 + rank (suits C,D,H,S; rank 0 = '2' .. 12 = 'A'); owner[card+1] = seat N,E,S,W = 0..3
CREATE OR REPLACE MACRO hcp(owner, seat) AS
    CASE WHEN _all_codes(owner, 52, -1, 3) AND _is_code(seat, 0, 3) THEN
        list_sum(list_transform(range(52), lambda c: CASE WHEN owner[c + 1] = seat THEN greatest(c % 13 - 8, 0) ELSE 0 END))
    END;
CREATE OR REPLACE MACRO suit_length(owner, seat, suit) AS
    CASE WHEN _all_codes(owner, 52, -1, 3) AND _is_code(seat, 0, 3) AND _is_code(suit, 0, 3) THEN
        len(list_filter(range(suit * 13, suit * 13 + 13), lambda c: owner[c + 1] = seat))
    END;
-- shape: lengths in S-H-D-C order, e.g. '5-3-3-2'; pattern: sorted, e.g. '5332'
CREATE OR REPLACE MACRO shape(owner, seat) AS
    CASE WHEN _all_codes(owner, 52, -1, 3) AND _is_code(seat, 0, 3) THEN
        concat_ws('-', suit_length(owner, seat, 3), suit_length(owner, seat, 2),
                       suit_length(owner, seat, 1), suit_length(owner, seat, 0))
    END;
CREATE OR REPLACE MACRO pattern(owner, seat) AS
    CASE WHEN _all_codes(owner, 52, -1, 3) AND _is_code(seat, 0, 3) THEN
        array_to_string(list_reverse_sort([suit_length(owner, seat, 3), suit_length(owner, seat, 2),
                                           suit_length(owner, seat, 1), suit_length(owner, seat, 0)]), '')
    END;
CREATE OR REPLACE MACRO seat_name(seat) AS CASE WHEN _is_code(seat, 0, 3) THEN ['N', 'E', 'S', 'W'][seat + 1] END;
CREATE OR REPLACE MACRO strain_name(strain) AS
    CASE WHEN _is_code(strain, 0, 4) THEN ['C', 'D', 'H', 'S', 'NT'][strain + 1] END;
CREATE OR REPLACE MACRO call_name(call) AS
    CASE WHEN _is_code(call, 0, 37) THEN
        CASE call WHEN 0 THEN 'P' WHEN 1 THEN 'X' WHEN 2 THEN 'XX'
                  ELSE ((call - 3) // 5 + 1)::VARCHAR || strain_name((call - 3) % 5) END
    END;
-- a problem's script (records.problem_script) as text: call names, 'AC' where N/S are to call (-1)
CREATE OR REPLACE MACRO script_text(script) AS
    array_to_string(list_transform(script, lambda c: CASE WHEN c = -1 THEN 'AC' ELSE call_name(c) END), ' ');
-- vul: none=0, NS=1, EW=2, both=3
CREATE OR REPLACE MACRO is_vulnerable(vul, seat) AS
    CASE WHEN _is_code(vul, 0, 3) AND _is_code(seat, 0, 3) THEN
        vul = 3 OR (vul = 1 AND seat % 2 = 0) OR (vul = 2 AND seat % 2 = 1)
    END;
-- DD tricks of a declarer in a strain: dd = int8[20] [declarer N,E,S,W][strain C,D,H,S,NT]
CREATE OR REPLACE MACRO dd_tricks_for(dd, declarer, strain) AS
    CASE WHEN _all_codes(dd, 20, 0, 13) AND _is_code(declarer, 0, 3) AND _is_code(strain, 0, 4) THEN
        dd[declarer * 5 + strain + 1]
    END;
-- the score of a contract of level 1..7 with valid arguments (contract_score checks them)
CREATE OR REPLACE MACRO _contract_score(level, strain, doubled, vulnerable, tricks) AS
    CASE
    WHEN tricks >= level + 6 THEN
        (CASE WHEN strain = 4 THEN 40 + 30 * (level - 1) WHEN strain >= 2 THEN 30 * level ELSE 20 * level END)
            * (1 << doubled)
        + CASE WHEN (CASE WHEN strain = 4 THEN 40 + 30 * (level - 1) WHEN strain >= 2 THEN 30 * level
                          ELSE 20 * level END) * (1 << doubled) >= 100
               THEN CASE WHEN vulnerable THEN 500 ELSE 300 END ELSE 50 END
        + CASE WHEN level = 6 THEN CASE WHEN vulnerable THEN 750 ELSE 500 END
               WHEN level = 7 THEN CASE WHEN vulnerable THEN 1500 ELSE 1000 END ELSE 0 END
        + 50 * doubled
        + (tricks - level - 6) * CASE WHEN doubled = 0 THEN CASE WHEN strain >= 2 THEN 30 ELSE 20 END
                                      ELSE (CASE WHEN vulnerable THEN 200 ELSE 100 END) * doubled END
    ELSE
        -(CASE
          WHEN doubled = 0 THEN (level + 6 - tricks) * CASE WHEN vulnerable THEN 100 ELSE 50 END
          WHEN vulnerable THEN doubled * (200 + 300 * (level + 5 - tricks))
          ELSE doubled * (100 + 200 * least(level + 5 - tricks, 2) + 300 * greatest(level + 3 - tricks, 0))
          END)
    END;
-- Duplicate score for the declaring side (Law 77). Level 0 = passed out: 0, as the board has no
-- strain, declarer or tricks (the shards store NULL). The shards store int8: widen (after the
-- guard, which keeps the cast in range) or 30 * level overflows.
CREATE OR REPLACE MACRO contract_score(level, strain, doubled, vulnerable, tricks) AS
    CASE WHEN level = 0 THEN 0
         WHEN _is_code(level, 1, 7) AND _is_code(strain, 0, 4) AND _is_code(doubled, 0, 2) AND vulnerable IS NOT NULL
              AND _is_code(tricks, 0, 13) THEN
             _contract_score(level::INTEGER, strain::INTEGER, doubled::INTEGER, vulnerable, tricks::INTEGER)
    END;
-- North-South's score of a contract by `declarer` (0 for a passed-out board, as contract_score)
CREATE OR REPLACE MACRO score_ns(level, strain, doubled, declarer, vul, tricks) AS
    CASE WHEN level = 0 THEN 0
         WHEN _is_code(declarer, 0, 3) AND _is_code(vul, 0, 3) THEN
             CASE WHEN declarer % 2 = 0 THEN 1 ELSE -1 END
                 * contract_score(level, strain, doubled, is_vulnerable(vul, declarer), tricks)
    END;
-- IMPs for a score difference (Law 78B), signed; any difference is valid (NULL gives NULL)
CREATE OR REPLACE MACRO imps(difference) AS
    sign(difference) * len(list_filter({IMP_THRESHOLDS}, lambda t: t <= abs(difference)));
"""


def _files(paths: list[str]) -> str:
    """A DuckDB list literal of the shards' absolute paths."""
    quoted = (str(Path(path).resolve()).replace("'", "''") for path in paths)
    return "[" + ", ".join(f"'{path}'" for path in quoted) + "]"


def view_sql(shards: dict[str, list[str]]) -> list[str]:
    """The views over `shards` (view name -> its files: records, quarantine, and with a DD store
    dd, dd_quarantine, dd_mismatches)."""
    statements = [
        f"CREATE OR REPLACE VIEW records AS SELECT * FROM read_parquet({_files(shards['records'])})",
        f"CREATE OR REPLACE VIEW quarantine AS SELECT * FROM read_parquet({_files(shards['quarantine'])})",
        # one row per distinct complete deal, with how often and where it was played (a bidding
        # problem on it is not a table: counted apart)
        """CREATE OR REPLACE VIEW deals AS
           SELECT deal_id, any_value(owner) AS owner, any_value(deal) AS deal, any_value(hcp) AS hcp,
                  count(*) FILTER (WHERE award_table IS NULL) AS tables,
                  count(*) FILTER (WHERE award_table IS NOT NULL) AS problems,
                  count(DISTINCT source_file) AS files
           FROM records WHERE deal_id IS NOT NULL GROUP BY deal_id""",
        # the bidding problems (award table, script; DESIGN.md "Bidding problems (Facit)") with
        # each one's top award and the contracts that earn it
        """CREATE OR REPLACE VIEW problems AS
           SELECT record_id, deal_id, owner, deal, source_file, board, dealer, vulnerability,
                  problem_script IS NOT NULL AS scripted, script_text(problem_script) AS script, top_points,
                  array_to_string(list_transform(list_filter(award_table, lambda a: a.points = top_points),
                                                 lambda a: a.contract), ' ') AS top_contracts,
                  award_table, problem_script
           FROM (SELECT *, coalesce(list_max(list_transform(award_table, lambda a: a.points)), 0) AS top_points
                 FROM records WHERE award_table IS NOT NULL)""",
    ]
    if "dd" in shards:
        statements += [
            # one row per deal_id (a crash can leave a deal in two label files): the exact DDS row
            # over an NN-DDA estimate (`ddlabel --estimator nn`), whose `solver` says 'nn-dda'
            f"""CREATE OR REPLACE VIEW dd AS SELECT * FROM read_parquet({_files(shards['dd'])})
                QUALIFY row_number() OVER (PARTITION BY deal_id ORDER BY solver <> 'dds', solver_version) = 1""",
            f"CREATE OR REPLACE VIEW dd_quarantine AS SELECT * FROM read_parquet({_files(shards['dd_quarantine'])})",
            f"CREATE OR REPLACE VIEW dd_mismatches AS SELECT * FROM read_parquet({_files(shards['dd_mismatches'])})",
            # the contract each table played next to what double dummy says of it, and par
            """CREATE OR REPLACE VIEW contract_vs_dd AS
               SELECT r.record_id, r.deal_id, r.board, r.dealer, r.vulnerability, r.source_file,
                      r.contract, r.contract_level, r.contract_strain, r.contract_doubled, r.declarer,
                      r.tricks, r.score_ns, d.solver AS dd_solver,
                      dd_tricks_for(d.dd_tricks, r.declarer, r.contract_strain) AS dd_tricks,
                      score_ns(r.contract_level, r.contract_strain, r.contract_doubled, r.declarer,
                               r.vulnerability, dd_tricks_for(d.dd_tricks, r.declarer, r.contract_strain)) AS dd_score_ns,
                      d.par_score[r.dealer * 4 + r.vulnerability + 1] AS par_score_ns,
                      d.par_contracts[r.dealer * 4 + r.vulnerability + 1] AS par_contracts
               FROM records r JOIN dd d USING (deal_id)
               WHERE r.contract_level IS NOT NULL""",
        ]
    return statements


# view -> (its folder below the option's, the option, the shards' schema, what they are called)
VIEWS = {"records": ("", "--records", schema.RECORDS, "records"),
         "quarantine": ("", "--quarantine", schema.QUARANTINE, "quarantine"),
         "dd": ("labels", "--dd", schema.DD_LABELS, "DD label"),
         "dd_quarantine": ("quarantine", "--dd", schema.DD_QUARANTINE, "DD quarantine"),
         "dd_mismatches": ("mismatches", "--dd", schema.DD_MISMATCHES, "DD mismatches")}


def _shards(folder: Path, what: str, table_schema, kind: str) -> tuple[list[str], list[dict]]:
    """Every view reads Parquet shards: a missing or empty folder, or one mixing schemas, is the
    user's mistake, named here rather than in a DuckDB traceback; unreadable shards are set aside."""
    existing(folder, what)
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise InputError(f"{what} {folder}: no Parquet file in it")
    return checked_shards(files, table_schema, f"{what} {folder}", kind)


def build(out: Path, records: Path, quarantine: Path, dd: Path | None) -> None:
    """Write the catalog to a temporary file, then rename it over `out`."""
    folders = {"records": records, "quarantine": quarantine}
    if dd is not None:
        folders |= {view: dd / VIEWS[view][0] for view in ("dd", "dd_quarantine", "dd_mismatches")}
    shards, skipped = {}, []
    for view, folder in folders.items():
        _, what, table_schema, kind = VIEWS[view]
        shards[view], unreadable = _shards(folder, what, table_schema, kind)
        skipped += [{"view": view, **entry} for entry in unreadable]
    for entry in skipped:
        LOG.warning("catalog: %s left out of view %s: %s", entry["file"], entry["view"], entry["why"])
    with atomic_path(out) as temporary:  # analysts never open a half-built catalog
        connection = duckdb.connect(str(temporary), config={"storage_compatibility_version": "v1.5.0"})
        try:
            connection.execute(MACROS)
            for statement in view_sql(shards):
                connection.execute(statement)
            connection.execute("CREATE TABLE skipped_shards (view VARCHAR, file VARCHAR, why VARCHAR)")
            if skipped:
                connection.executemany("INSERT INTO skipped_shards VALUES (?, ?, ?)",
                                       [(entry["view"], entry["file"], entry["why"]) for entry in skipped])
            counts = connection.execute("SELECT (SELECT count(*) FROM records), (SELECT count(*) FROM quarantine)").fetchone()
        finally:
            connection.close()
    LOG.info("catalog %s: %d records, %d quarantined", out, *counts)


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bridgeflow catalog", description="Build the DuckDB catalog.")
    parser.add_argument("--records", type=Path, required=True)
    parser.add_argument("--quarantine", type=Path, required=True)
    parser.add_argument("--dd", type=Path, help="DD store folder of `bridgeflow ddlabel` (adds dd, dd_quarantine, "
                        "dd_mismatches and contract_vs_dd views)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    build(output_file(args.out), args.records, args.quarantine, args.dd)
