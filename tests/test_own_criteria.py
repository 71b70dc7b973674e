"""Criteria of a user's own (issue 70, item 2): every method takes one, from Python and from the command line.

The items are generated here (a benchmark name outside the catalog, `my_outputs`); the criterion is not in the repository.
The scripted judge answers each request in the form the request asks for (its choices, its JSON schema or its method's
placeholder: `DryRunJudge.placeholder`), and records every prompt, so a test sees where the definition went."""
import json, subprocess, sys
import pytest

from conftest import ROOT, checkeval_cli, run_cli, read_run

DEFINITION = 'The summary can be understood on one reading: plain words, complete sentences and no unclear references.'
METHODS = ['geval', 'seeval', 'likert', 'checkeval', 'seal', 'keypoint', 'interacteval', 'rocketeval']


def make_items(n=4, benchmark='my_outputs'):
    from checkeval.core import Item
    texts = [('The town council met on Monday and voted to build a library in the centre. Work starts in May.',
              'The council voted for a new library in the town centre; building starts in May.'),
             ('Heavy rain closed two roads near the river on Tuesday. Police asked drivers to avoid the area until Friday.',
              'Rain. Roads. It said to avoid it.'),
             ('A local bakery won a national prize for its rye bread. The owner thanked her staff.',
              'A bakery won a national prize for rye bread, and its owner thanked the staff.'),
             ('The school will open a second science lab next year, paid for by a grant from the county.',
              'Next year the school opens another lab, funded by the county.')]
    return [Item(benchmark=benchmark, item_id=f'row{k}', group_id=f'doc{k}', system_id='mysystem', source=s, output=o)
            for k, (s, o) in enumerate(texts[:n])]


class Scripted:
    "A judge's function: the reply each request asks for (as a dry run answers it), every prompt kept."
    def __init__(self):
        from checkeval.judges import FunctionJudge
        from checkeval.judges.engine import DryRunJudge
        self.prompts, self.stages = [], []
        self.form = DryRunJudge(FunctionJudge(lambda r: 'yes', progress=False))
        self.judge = FunctionJudge(self, name='scripted', progress=False, cache=False)

    def __call__(self, req):
        self.prompts.append('\n'.join(m['content'] for m in req.messages)); self.stages.append((req.meta or {}).get('stage'))
        c = req.constraint
        if c is not None and c.choices and '4' in c.choices: return '4'           # a rating held to the scale
        return self.form.placeholder(req)


def clarity(scale=None):
    from checkeval.criteria import criterion
    return criterion('clarity', DEFINITION, scale)


@pytest.mark.parametrize('method', METHODS)
def test_every_method_takes_a_criterion(method, tmp_path):
    "Each method on generated items with a criterion of the user's own: a score per item, the definition in the prompts."
    from checkeval.runs import evaluate
    s = Scripted()
    opts = {'creator': 'scripted', 'normalized': False} if method == 'rocketeval' else {}   # a scripted reply has no logprobs
    if method in ('geval', 'seeval'): opts = {'answer': 'choices'}   # the scripted judge writes no free-text rating: the rating held to the scale
    info, res = evaluate(method, 'my_outputs', s.judge, items=make_items(), dimensions=[clarity()], root=tmp_path/'runs', options=opts)
    assert info.path.relative_to(tmp_path/'runs').parts[0] == 'my_outputs'        # filed under the user's name, no paper benchmark's
    js = [j for j in res.judgments if j.dimension == 'clarity']
    assert sorted(j.item_id for j in js) == ['row0', 'row1', 'row2', 'row3'], [j.item_id for j in res.judgments]
    assert all(j.score is not None and j.n_answered > 0 for j in js), js
    assert any(DEFINITION in p for p in s.prompts), f'{method}: the definition reached no prompt'
    meta = json.loads((info.path/'meta.json').read_text())
    assert meta['config']['criteria'] == [{'name': 'clarity', 'definition': DEFINITION, 'scale': None}]


def test_a_rating_takes_the_criterion_scale(tmp_path):
    from checkeval.runs import evaluate
    s = Scripted()
    _, res = evaluate('geval', 'my_outputs', s.judge, items=make_items(1), dimensions=[clarity((1, 10))], root=tmp_path)
    assert res.answers[0].meta['scale'] == [1.0, 10.0] and '1-10' in s.prompts[0].replace('–', '-')


def test_two_definitions_two_runs(tmp_path):
    from checkeval.criteria import criterion
    from checkeval.runs import evaluate
    s = Scripted()
    a, _ = evaluate('likert', 'my_outputs', s.judge, items=make_items(1), dimensions=[clarity()], root=tmp_path)
    b, _ = evaluate('likert', 'my_outputs', s.judge, items=make_items(1), dimensions=[criterion('clarity', 'Short sentences.')], root=tmp_path)
    assert a.path != b.path


@pytest.mark.parametrize('method', ['geval', 'seeval', 'likert', 'checkeval', 'seal', 'interacteval'])
def test_a_dimension_without_definition_is_refused_before_any_request(method, tmp_path):
    from checkeval.core import Dimension
    from checkeval.criteria import CriterionError
    from checkeval.runs import evaluate
    s = Scripted()
    with pytest.raises(CriterionError, match='--criterion clarity='):
        evaluate(method, 'my_outputs', s.judge, items=make_items(1), dimensions=[Dimension(name='clarity')], root=tmp_path)
    assert s.prompts == [] and not (tmp_path/'my_outputs').exists()


def test_checkeval_builds_keeps_and_reuses_its_checklist(tmp_path):
    "Seed questions, diversification, elaboration and the filter by the builder (the evaluating judge by default), once."
    from checkeval.runs import evaluate
    s = Scripted()
    info, res = evaluate('checkeval', 'my_outputs', s.judge, items=make_items(2), dimensions=[clarity()], root=tmp_path/'runs',
                         options={'checklist_dir': str(tmp_path/'lists')})
    built = res.artifacts['criteria_checklists']
    assert built['built']['clarity']['reused'] is False and built['builder_is_evaluator'] is True
    assert s.stages[:4] == ['seed', 'diversification', 'elaboration', 'filter']
    stages = {q['stage'] for sd in res.artifacts['checklists']['clarity']['sub_dimensions'] for q in sd['questions']}
    assert 'seed' in stages
    assert {a.meta['question'] for a in res.answers} <= {q['text'] for sd in res.artifacts['checklists']['clarity']['sub_dimensions'] for q in sd['questions']}
    n = len(s.stages)
    _, res2 = evaluate('checkeval', 'my_outputs', s.judge, items=make_items(1), dimensions=[clarity()], root=tmp_path/'runs',
                       options={'checklist_dir': str(tmp_path/'lists')})
    assert res2.artifacts['criteria_checklists']['built']['clarity']['reused'] is True
    assert 'seed' not in s.stages[n:] and res2.artifacts['checklists'] == res.artifacts['checklists']


def test_checkeval_with_a_builder_judge(tmp_path):
    from checkeval.judges import FunctionJudge
    from checkeval.runs import evaluate
    b, s = Scripted(), Scripted()
    builder = FunctionJudge(b, name='builder', progress=False, cache=False)
    _, res = evaluate('checkeval', 'my_outputs', s.judge, items=make_items(1), dimensions=[clarity()], root=tmp_path,
                      options={'builder': 'builder', 'checklist_dir': str(tmp_path/'lists')}, make_judge=lambda name: builder)
    assert 'seed' in b.stages and 'seed' not in s.stages
    assert res.artifacts['criteria_checklists']['builder']['name'] == 'builder'


def test_checkeval_asks_the_users_questions(tmp_path):
    from checkeval.runs import evaluate
    f = tmp_path/'clarity.txt'
    f.write_text('Words:\nAre the words plain?\nIs every name explained?\nReferences:\nIs it clear what each pronoun refers to?\n')
    s = Scripted()
    _, res = evaluate('checkeval', 'my_outputs', s.judge, items=make_items(2), dimensions=[clarity()], root=tmp_path,
                      options={'checklist': str(f)})
    assert {a.meta['question'] for a in res.answers} == {'Are the words plain?', 'Is every name explained?', 'Is it clear what each pronoun refers to?'}
    assert 'seed' not in s.stages and res.artifacts['criteria_checklists']['files'] == {'clarity': str(f)}


def test_checkeval_on_a_users_benchmark_without_criterion_says_what_to_pass(tmp_path):
    from checkeval.criteria import CriterionError
    from checkeval.runs import evaluate
    with pytest.raises(CriterionError, match='--criterion coherence=.*--checklist FILE'):
        evaluate('checkeval', 'my_outputs', Scripted().judge, items=make_items(1), dimensions=['coherence'], root=tmp_path)


def test_check_eval_reference_forms_need_a_reference(tmp_path):
    from checkeval.core import DataError
    from checkeval.runs import evaluate
    items = [it.model_copy(update={'source': None}) for it in make_items(1)]
    s = Scripted()
    with pytest.raises(DataError, match='mode=criterion'):
        evaluate('keypoint', 'my_outputs', s.judge, items=items, dimensions=[clarity()], root=tmp_path, options={'mode': 'reference'})
    assert s.prompts == []


def test_rocketeval_needs_a_query(tmp_path):
    from checkeval.criteria import CriterionError
    from checkeval.runs import evaluate
    items = [it.model_copy(update={'source': ''}) for it in make_items(1)]
    s = Scripted()
    with pytest.raises(CriterionError, match='query'):
        evaluate('rocketeval', 'my_outputs', s.judge, items=items, dimensions=[clarity()], root=tmp_path, options={'creator': 'scripted'})
    assert s.prompts == []


def test_checkeval_builds_its_checklist_with_smollm2(smollm2, tmp_path):
    """A real small builder, its seed reply held to the JSON schema: either its questions are read and the checklist is
    built (filter included), or the run stops in one line naming the builder and the way out; never a made-up checklist.
    (SmolLM2-135M copies the template's example, `"Question?"`, which is no question: the second case.)"""
    from checkeval.core import DataError
    from checkeval.runs import evaluate
    opts = {'build_max_tokens': 192, 'granularity': 'question', 'answer': 'choices', 'checklist_dir': str(tmp_path/'lists')}
    try: info, res = evaluate('checkeval', 'my_outputs', smollm2, items=make_items(2), dimensions=[clarity()], root=tmp_path/'runs', options=opts)
    except DataError as e:
        assert 'seed reply of smollm2' in str(e) and '--checklist FILE' in str(e) and '\n' not in str(e)
        assert not (tmp_path/'runs'/'my_outputs').exists() and not list((tmp_path/'lists').rglob('*.yaml'))
        return
    built = res.artifacts['criteria_checklists']['built']['clarity']
    assert built['reused'] is False and built['counts']['final'] > 0
    assert any(a.ok for a in res.answers) and all(a.value in (0.0, 1.0) for a in res.answers if a.ok)


# the command line: --criterion on a catalogued benchmark's items works today; on a user's file it needs --input (own-data)

def test_cli_criterion_on_benchmark_items(cli_env):
    out = run_cli(['evaluate', '--method', 'likert', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1',
                   '--criterion', f'clarity(1-10)={DEFINITION}'], cli_env)
    answers, judgments, meta, _ = read_run(out['run'])
    assert [j['dimension'] for j in judgments] == ['clarity'] and answers[0]['meta']['scale'] == [1.0, 10.0]
    assert meta['config']['criteria'][0]['definition'] == DEFINITION


def test_cli_criteria_file_and_checklist(cli_env, tmp_path):
    (tmp_path/'clarity.txt').write_text('Are the words plain?\nIs every name explained?\n')
    (tmp_path/'criteria.yaml').write_text(f'- name: clarity\n  definition: "{DEFINITION}"\n  checklist: clarity.txt\n')
    out = run_cli(['evaluate', '--method', 'checkeval', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1',
                   '--criteria', str(tmp_path/'criteria.yaml'), '-o', 'granularity=question', '-o', 'answer=choices'], cli_env)
    answers, *_ = read_run(out['run'])
    assert {a['meta']['question'] for a in answers} == {'Are the words plain?', 'Is every name explained?'}


@pytest.mark.parametrize('args,words', [(['--method', 'geval', '--criterion', 'clarity='], 'empty definition'),
                                        (['--method', 'geval', '--criterion', 'clarity=  '], 'empty definition'),
                                        (['--method', 'geval', '--criterion', f'clarity={DEFINITION}', '--checklist', 'x.txt'], '--checklist is for'),
                                        (['--method', 'checkeval', '--criterion', f'clarity={DEFINITION}', '--checklist', 'nope.txt'], 'not found'),
                                        (['--method', 'likert', '--criteria', 'nope.yaml'], 'criteria file not found')])
def test_cli_criterion_mistakes_are_one_line(cli_env, args, words):
    r = checkeval_cli(['evaluate', '--benchmark', 'summeval', '--judge', 'tiny', '--limit', '1', *args], cli_env)
    errors = [l for l in r.stderr.splitlines() if 'error' in l]
    assert r.returncode == 2 and words in r.stderr and 'Traceback' not in r.stderr and len(errors) == 1, r.stderr[-2000:]


def _has_input() -> bool:
    r = subprocess.run([sys.executable, '-m', 'checkeval.cli', 'evaluate', '--help'], cwd=ROOT, capture_output=True, text=True)
    return '--input' in r.stdout

needs_input = pytest.mark.skipif(not _has_input(), reason='checkeval evaluate --input (branch own-data) is not merged yet')


@needs_input
@pytest.mark.parametrize('method', METHODS)
def test_cli_every_method_on_a_users_file(cli_env, tmp_path, method):
    f = tmp_path/'outputs.jsonl'
    f.write_text(''.join(json.dumps({'id': it.item_id, 'source': it.source, 'output': it.output}) + '\n' for it in make_items(2)))
    (tmp_path/'clarity.txt').write_text('Are the words plain?\nIs every name explained?\n')
    extra = {'rocketeval': ['-o', 'creator=tiny'], 'checkeval': ['--checklist', str(tmp_path/'clarity.txt')]}.get(method, [])   # tiny writes no checklist
    r = checkeval_cli(['evaluate', '--method', method, '--input', str(f), '--judge', 'tiny', '--criterion', f'clarity={DEFINITION}', *extra], cli_env)
    assert r.returncode in (0, 1) and 'Traceback' not in r.stderr, r.stderr[-2000:]      # tiny's replies may not parse (exit 1), never a crash
    if r.returncode == 0: assert '/summeval/' not in r.stdout


@needs_input
def test_cli_empty_criterion_on_a_users_file(cli_env, tmp_path):
    f = tmp_path/'outputs.jsonl'
    f.write_text(''.join(json.dumps({'id': it.item_id, 'source': it.source, 'output': it.output}) + '\n' for it in make_items(1)))
    r = checkeval_cli(['evaluate', '--method', 'geval', '--input', str(f), '--judge', 'tiny', '--criterion', 'clarity='], cli_env)
    assert r.returncode == 2 and 'empty definition' in r.stderr and 'Traceback' not in r.stderr, r.stderr[-2000:]


@needs_input
def test_cli_checkeval_builder_too_weak_is_one_line(cli_env, tmp_path):
    "tiny (plumbing only) writes no seed questions: the build stops in one line naming -o builder= and --checklist."
    f = tmp_path/'outputs.jsonl'
    f.write_text(''.join(json.dumps({'id': it.item_id, 'source': it.source, 'output': it.output}) + '\n' for it in make_items(1)))
    r = checkeval_cli(['evaluate', '--method', 'checkeval', '--input', str(f), '--judge', 'tiny', '--criterion', f'clarity={DEFINITION}'], cli_env)
    assert r.returncode == 2 and 'seed reply of tiny' in r.stderr and '--checklist FILE' in r.stderr and 'Traceback' not in r.stderr, r.stderr[-2000:]


@needs_input
def test_cli_interacteval_named_checklist(cli_env, tmp_path):
    "InteractEval reads --checklist NAME=FILE (the form its help gives) as CheckEval does: the file's questions are asked."
    f = tmp_path/'outputs.jsonl'
    f.write_text(''.join(json.dumps({'id': it.item_id, 'source': it.source, 'output': it.output}) + '\n' for it in make_items(1)))
    (tmp_path/'clarity.txt').write_text('Are the words plain?\nIs every name explained?\n')
    r = checkeval_cli(['evaluate', '--method', 'interacteval', '--input', str(f), '--judge', 'tiny', '--criterion', f'clarity={DEFINITION}',
                       '--checklist', f"clarity={tmp_path/'clarity.txt'}"], cli_env)
    assert r.returncode in (0, 1) and 'Traceback' not in r.stderr and 'not found' not in r.stderr, r.stderr[-2000:]
    answers, *_ = read_run(json.loads(r.stdout.strip().splitlines()[-1])['run'])
    assert {a['meta']['question'] for a in answers} == {'Are the words plain?', 'Is every name explained?'}
