"`checkeval evaluate --method rocketeval --benchmark mt_bench --judge tiny` end to end: creation, grading, scoring, records, cache."
import pytest

from conftest import read_run, run_cli

# small and fast: the first MT-Bench question, first turn, two generated "systems", short generations
BASE = ['evaluate', '--method', 'rocketeval', '--benchmark', 'mt_bench', '--judge', 'tiny', '--limit', '1', '--sample', 'first',
        '-o', 'turns=[1]', '-o', 'respond_max_tokens=8', '-o', 'create_max_tokens=24']


def test_tiny_creation_fails_on_record_and_the_fallback_grades(cli_env):
    out = run_cli(BASE + ['-o', 'on_creation_failure=fixed'], cli_env)
    answers, judgments, meta, arts = read_run(out)
    # creation: the tiny judge's replies are noise, so every instance is a recorded failure (with its raw text) ...
    log = arts['creation_log']
    assert [r['instance_id'] for r in log] == ['81-t1']
    assert all(r['status'] != 'ok' and r['fallback'] == 'fixed' and r['prompt_tokens'] > 0 for r in log)
    # ... and the explicit fallback grades the responses with the fixed list of six questions
    assert arts['responses']['plumbing'] is True and len(arts['responses']['records']) == 2
    assert len(answers) == 2 * 6 == out['answers']
    for a in answers:
        assert a['method'] == 'rocketeval' and a['judge'] == 'tiny' and a['question_id'].startswith('81-t1/f')
        assert a['prompt_tokens'] > 0 and a['completion_tokens'] == 1 and a['latency_s'] is not None and len(a['cache_key']) == 64
        assert a['raw_text'] in ('Yes', 'No')   # the released P(Yes) rule reads the top 5 only: tiny's Yes/No may lie below them
        assert (a['status'] == 'ok' and 0 <= a['p_yes'] <= 1 and a['value'] == a['p_yes']) or \
               (a['status'] == 'neither Yes nor No among the top 5 logprobs' and a['value'] is None)
    # scoring: the unsupervised score is the mean normalised score mapped onto 1-10
    assert len(judgments) == 2
    for j in judgments:
        ps = [a['value'] for a in answers if a['item_id'] == j['item_id']]
        filled = [0.5 if v is None else v for v in ps]   # the released rule counts an unknown item 0.5 (none known: no score)
        assert j['score'] is None if all(v is None for v in ps) else j['score'] == pytest.approx(sum(filled) / len(filled) * 9 + 1)
        assert j['n_questions'] == 6 and j['meta']['plumbing'] is True
    assert meta['usage']['sent'] > 0 and meta['config']['method'] == 'rocketeval'
    # the cost table is counted from the records: creation once, grading per test (each request once)
    from checkeval.core import Answer
    from checkeval.methods.rocketeval.tables import request_costs
    st = request_costs([Answer(**a) for a in answers], log, 'tiny', 'tiny').set_index('stage')
    assert st.loc['create', 'requests'] == 1 and st.loc['grade', 'requests'] == 12 and st.loc['grade', 'tests'] == 2
    assert st.loc['grade', 'input_tokens'] == sum(a['prompt_tokens'] for a in answers)

    # a second identical run makes no new judge call
    again = run_cli(BASE + ['-o', 'on_creation_failure=fixed'], cli_env)
    assert again['usage']['sent'] == 0 and again['usage']['cached'] == again['usage']['requests'] > 0
    answers2, judgments2, *_ = read_run(again)
    assert [a['value'] for a in answers2] == [a['value'] for a in answers]


def test_default_run_records_creation_failures_as_unscored(cli_env):
    # no checklist could be read, so no question was asked: the run is recorded, and the command exits 1 (no answer obtained)
    out = run_cli(BASE, cli_env, returncode=1)
    answers, judgments, meta, arts = read_run(out)
    assert answers == [] and len(judgments) == 2
    for j in judgments:
        assert j['score'] is None and j['meta']['reason'].startswith('no checklist: ')


def test_checklist_file_and_unparsed_replies_are_nulls(cli_env, tmp_path):
    from checkeval.methods.rocketeval.method import make_checklist, save_checklists
    cl = make_checklist('81-t1', ['Does the post describe cultural experiences in Hawaii?', 'Does the post name must-see attractions?'],
                        benchmark='mt_bench', source='test fixture')
    path = save_checklists(tmp_path/'checklists.jsonl', [cl])
    # unconstrained, decoded yes/no (the "w/o normalised score" ablation): the tiny model's word is mostly not yes/no
    out = run_cli(BASE + ['-o', f'checklists={path}', '-o', 'constrain=false', '-o', 'normalized=false', '-o', 'top_logprobs=50'], cli_env)
    answers, judgments, meta, arts = read_run(out)
    assert len(answers) == 4 and {a['question_id'] for a in answers} == {'81-t1/c1', '81-t1/c2'}
    for a in answers:
        if a['status'] == 'ok': assert a['value'] in (0.0, 1.0)
        else: assert a['value'] is None and a['status'].startswith('reply is not yes/no')
    assert out['failed'] == sum(a['value'] is None for a in answers) >= 1   # the tiny model's words are rarely yes/no
    assert out['missing_rule']['unread'] == out['failed'] and out['missing_rule']['no_logprob'] == 0   # decoded: no P(Yes) read
    assert meta['missing_rule'] == out['missing_rule']
    for j in judgments: assert j['n_failed'] + j['n_answered'] == 2
