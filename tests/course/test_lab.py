"""The ablation lab (chapter 10): the finished engine does the task; each mechanism, switched off,
shows what it was for; and the table is the same on every run, in either language.

The lab runs once for the module (ten runs of the task, a few seconds); one test runs it again.
"""

import re
import tempfile

import pytest

from corecoder.calls import OUTPUT_LIMIT
from corecoder_course.lab import WINDOW, ablate, lab_table
from corecoder_course.words import columns, speaking


@pytest.fixture(scope="module")
def rows():
    return ablate()


@pytest.fixture(scope="module")
def off(rows):
    """Each row by the mechanism it switched off ("nothing": the finished engine)."""
    return {row.mechanism.name: row for row in rows}


def same_figures(a, b) -> bool:
    return (a.rounds, a.failed, a.tokens_sent, a.cached_share, a.cost) == \
        (b.rounds, b.failed, b.tokens_sent, b.cached_share, b.cost)


def test_there_is_a_row_for_the_finished_engine_then_one_per_mechanism(rows):
    assert [row.mechanism.name for row in rows] == [
        "nothing", "compaction", "cache-stable prompt", "parallel calls", "edit cascade",
        "retries", "schema check", "legal history", "output bound", "consent"]
    assert all(row.mechanism.chapter for row in rows[1:])


def test_the_finished_engine_answers_with_the_invoice_right_and_the_data_kept(off):
    finished = off["nothing"]
    assert finished.ending.error == ""  # the answer: not too long, no 429, a legal history
    facts = finished.facts
    assert facts.invoice_wrong == () and facts.data_kept
    assert facts.suites_at_once == 3 and facts.test_seconds == 20
    assert facts.longest_result <= OUTPUT_LIMIT
    assert facts.compactions >= 1 and facts.retries == 1  # compaction and the retry did work
    assert finished.cached_share > 0.5
    assert finished.changed == ()


def test_without_compaction_the_provider_refuses_a_request_over_the_window(off):
    row = off["compaction"]
    assert row.ending.error == "too long"
    assert int(row.ending.detail.replace(",", "")) > WINDOW
    assert row.facts.invoice_wrong == ("subtotal", "discount")  # it never got to fix them


def test_without_the_cache_stable_prompt_the_cached_share_falls_and_the_cost_rises(off):
    finished, row = off["nothing"], off["cache-stable prompt"]
    assert row.ending == finished.ending and row.changed == ()
    assert row.cached_share < finished.cached_share / 5
    assert row.cost > 2 * finished.cost
    assert abs(row.tokens_sent - finished.tokens_sent) < 0.01 * finished.tokens_sent


def test_without_parallel_calls_one_suite_runs_at_a_time_for_three_times_as_long(off):
    finished, row = off["nothing"], off["parallel calls"]
    assert row.changed == ("suites_at_once", "test_seconds")
    assert row.facts.suites_at_once == 1
    assert row.facts.test_seconds == 3 * finished.facts.test_seconds
    assert same_figures(row, finished)  # every other figure the same


def test_without_the_edit_cascade_it_takes_one_more_round_and_one_more_failed_call(off):
    finished, row = off["nothing"], off["edit cascade"]
    assert row.rounds == finished.rounds + 1 and row.failed == finished.failed + 1
    assert row.ending == finished.ending and row.changed == ()  # the file ends up right anyway


def test_without_retries_the_run_ends_at_the_429(off):
    row = off["retries"]
    assert row.ending.error == "429"
    assert row.facts.retries == 0 and row.facts.invoice_wrong == ("subtotal", "discount")


def test_without_the_schema_check_the_invoice_is_wrong(off):
    row = off["schema check"]
    assert row.ending == off["nothing"].ending  # a silent corruption: the run ends as usual
    assert row.changed == ("invoice_wrong",)
    assert row.facts.invoice_wrong == ("vat",)  # replace_all="false" is true: both rates went


def test_without_the_legal_history_the_provider_refuses_a_call_left_unanswered(off):
    row = off["legal history"]
    assert row.ending.error == "unanswered"
    assert re.fullmatch(r"call_\d+_\d+", row.ending.detail)


def test_without_the_output_bound_a_longer_result_costs_more(off):
    """The whole log fills the window sooner, so the history is compacted sooner and fewer tokens
    are sent; but each compaction breaks the prompt cache, so less of what is sent is cached and
    the run costs more."""
    finished, row = off["nothing"], off["output bound"]
    assert "longest_result" in row.changed
    assert row.facts.longest_result > 5 * OUTPUT_LIMIT
    assert row.facts.compactions > finished.facts.compactions
    assert row.cached_share < finished.cached_share and row.cost > 1.1 * finished.cost


def test_without_consent_data_is_deleted(off):
    row = off["consent"]
    assert row.changed == ("data_kept",)
    assert not row.facts.data_kept


def test_no_row_but_its_own_shows_the_effect_of_another_mechanism(rows, off):
    too_long = [row.mechanism.name for row in rows if row.ending.error == "too long"]
    unanswered = [row.mechanism.name for row in rows if row.ending.error == "unanswered"]
    deleted = [row.mechanism.name for row in rows if not row.facts.data_kept]
    vat_wrong = [row.mechanism.name for row in rows if "vat" in row.facts.invoice_wrong]
    assert (too_long, unanswered, deleted, vat_wrong) == (
        ["compaction"], ["legal history"], ["consent"], ["schema check"])


def test_the_table_is_the_same_on_every_run_with_no_temp_path_or_port(rows):
    table = lab_table(rows)
    assert lab_table(ablate()) == table
    assert tempfile.gettempdir() not in table and "ablation-" not in table
    assert not re.search(r"127\.0\.0\.1|localhost|:\d{4,5}\b", table)
    assert all(len(line) <= 100 for line in table.splitlines())


def test_the_table_speaks_the_notebooks_language(rows):
    english = lab_table(rows)
    assert "what differs" in english and "compaction" in english and "data/: kept → deleted" in english
    with speaking("zh"):
        chinese = lab_table(rows)
    assert "不同之处" in chinese and "压缩" in chinese and "data/：还在 → 被删了" in chinese
    assert not re.search(r"\b(switched off|rounds|ended|kept|deleted|how)\b", chinese)
    assert all(columns(line) <= 100 for line in chinese.splitlines())  # a CJK character: 2


def test_the_name_column_is_headed_by_what_differs_from_the_finished_engine_for_every_row(rows):
    """A row names what differs from the finished engine: "nothing" (the finished engine itself), a
    mechanism switched off, or, in chapter 10, "your engine", which is no mechanism switched off."""
    for language, header, wrong in (("en", "what differs", "switched off"), ("zh", "不同之处", "关掉的机制")):
        with speaking(language):
            heading = lab_table(rows).split("\n\n")[1].splitlines()[0]  # above the figures
        assert header in heading and wrong not in heading
