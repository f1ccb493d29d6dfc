"""seq_gapless (hand-history-v1 1.1): where the table system numbers events without
gaps, a gap is rows lost; no rule blames the dealer for what the gap may hold."""

from __future__ import annotations

from casefiles import run_case

# round 2's wager is never settled in the log: its settlement rows (seq 9-10) are missing
LOG = '''
{"macro": "shoe", "burn": "3S"}
{"macro": "round", "player": "9S KD", "banker": "7H QC", "wagers": [[1, "player", 25]]}
{"event": "round_start"}
{"event": "wager", "seat": 1, "bet": "banker", "amount": 25}
{"event": "no_more_bets"}
{"event": "round_end", "seq": 100}
{"macro": "round", "player": "9S KD", "banker": "7H QC", "wagers": [[1, "player", 25]]}
'''


def _findings(tmp_path, gapless: bool) -> set[tuple]:
    case = {"files": [{"name": "log.jsonl", "events": LOG}],
            "house_top": f"seq_gapless = {'true' if gapless else 'false'}"}
    found = run_case(case, tmp_path)
    return set(found.select("round", "rule_id", "severity").iter_rows())


def test_without_gapless_numbers_the_unsettled_wager_is_an_error(tmp_path):
    found = _findings(tmp_path, gapless=False)
    assert any(severity == "error" and rnd == 2 for rnd, _, severity in found), found


def test_with_gapless_numbers_the_gap_is_lost_rows_and_no_error(tmp_path):
    found = _findings(tmp_path, gapless=True)
    assert found == {(2, "IN019", "warning"), (2, "IN014", "warning")}, found


def test_two_gaps_in_one_table_are_two_findings(tmp_path):
    """(Found by the property tests: two gaps made the audit crash.)"""
    burns = "\n".join(f'{{"event": "burn", "card": "2C", "round": 0, "seq": {seq}}}'
                      for seq in (2, 3, 5, 6, 8, 9))
    case = {"files": [{"name": "log.jsonl", "events": '{"event": "shuffle", "decks": 8}\n'
                       + burns}], "house_top": "seq_gapless = true"}
    found = run_case(case, tmp_path)
    gaps = found.filter(found["rule_id"] == "IN019")
    assert sorted(gaps["seq"].to_list()) == [5, 8]
