"""Speed of the PBN reader (bridgeflow.dataset.pbn.parse_pbn) next to endplay.parsers.pbn, single core.

    python benchmarks/bench_parsers_pbn.py [--real ../shared/data/real] [--repeats 3]

Both parse the same bytes of real files from the shared test data (BBA robot auctions, BBO
Helper daylong exports with notes and play, a BBO tournament with play, a Polish traveller file).
parse_pbn is timed from bytes to records, decoding included; endplay from the decoded text
(it takes a str). Times are CPU seconds of this process (time.process_time), so other work on a
shared machine skews them less. Reports records/s of the fastest of `repeats` runs and the ratio,
then the writer's speed (format_pbn on the records just read), which the synthetic corpus uses."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from endplay.parsers import pbn as endplay_pbn

from bridgeflow.dataset.pbn import parse_pbn
from bridgeflow.dataset.pbn_writer import format_pbn
from bridgeflow.dataset.record import BoardRecord

SAMPLES = {
    "BBA Weak natural 2M": ["lorserker_ben_pbn/Boards/BBA/Weak natural 2M.pbn"],
    "BBA Redoubles": ["lorserker_ben_pbn/Boards/BBA/Redoubles.pbn"],
    "BBO daylong (38 files)": ["lorserker_ben_pbn/Boards/BBO/*.pbn"],
    "BBO tournament, play": ["jarekczek_pbntools_tests/test/test_8_bbo_wronie_20130824/*.pbn"],
    "KOPS travellers": ["jarekczek_pbntools_tests/test/test_2_kops/PCH1003/PCH1003.pbn"],
}


def best_seconds(function, repeats: int) -> float:
    """CPU seconds of the fastest of `repeats` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/real")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(f"{'sample':<24} {'records':>8} {'parse_pbn rec/s':>16} {'endplay rec/s':>14} {'ratio':>6}")
    all_records: list[BoardRecord] = []
    for label, patterns in SAMPLES.items():
        files = sorted(path for pattern in patterns for path in args.real.glob(pattern))
        contents = [path.read_bytes() for path in files]
        texts = [data.decode("utf-8") for data in contents]
        records = [item for data in contents for item in parse_pbn(data, "bench")]
        count = len(records)
        endplay_count = sum(len(endplay_pbn.loads(text)) for text in texts)
        assert endplay_count == count, f"{label}: endplay read {endplay_count} games, parse_pbn {count}"
        ours = best_seconds(lambda: [item for data in contents for item in parse_pbn(data, "bench")], args.repeats)
        theirs = best_seconds(lambda: [endplay_pbn.loads(text) for text in texts], args.repeats)
        print(f"{label:<24} {count:>8} {count / ours:>16,.0f} {count / theirs:>14,.0f} {theirs / ours:>5.1f}x")
        all_records.extend(item for item in records if isinstance(item, BoardRecord))

    seconds = best_seconds(lambda: [format_pbn(record) for record in all_records], args.repeats)
    print(f"\nformat_pbn: {len(all_records)} records, {len(all_records) / seconds:,.0f} records/s")


if __name__ == "__main__":
    main()
