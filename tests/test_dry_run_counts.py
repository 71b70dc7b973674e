"""Cost estimates count every request: for every method, the number of requests a dry run (`DryRunJudge`, placeholder
replies) asks for equals the number a real run asks for when its judge replies with well-formed answers (a scripted
`FunctionJudge`), on the same few items. A placeholder that a later stage cannot read (a checklist, a decomposition, a
list of components) would end the dry run early and the counts would differ."""
import hashlib, json, re

import pytest

from checkeval import data
from checkeval.judges import DryRunJudge, FunctionJudge, JudgeResponse
from checkeval.runs import evaluate

pytestmark = [pytest.mark.filterwarnings('ignore::UserWarning'),
              pytest.mark.skipif(not data.available('benchmarks/summeval/summeval.jsonl'), reason='summeval not available')]

N_QUESTIONS = 5    # the scripted checklists have as many questions as the dry run's placeholders (DryRunJudge.list_items)


def _user(req) -> str: return req.messages[-1]['content']
def _all(req) -> str: return '\n'.join(str(m['content']) for m in req.messages)
def _schema(req): return req.constraint.json_schema if req.constraint is not None and req.constraint.json_schema else None


def _lines_or_json(req, key, values):
    "A JSON object under `key` when the backend enforces a schema, else numbered lines."
    if _schema(req) is not None: return json.dumps({key: values})
    return '\n'.join(f'{i}. {v}' for i, v in enumerate(values, 1))


class Scripted:
    "Well-formed replies for each stage of each method, written here without the dry run's placeholders."
    def __init__(self): self.calls = 0; self.components = ['Topic focus', 'Order of ideas', 'Links between sentences', 'Clear ending', 'No repetition']

    def __call__(self, req):
        self.calls += 1          # once per distinct request: the engine sends a repeated request once
        meta, schema, user = req.meta or {}, _schema(req), _user(req)
        stage = meta.get('stage')
        if req.constraint is not None and req.constraint.choices:                    # one-token yes/no (RocketEval)
            c = req.constraint.choices
            return JudgeResponse(text=c[0], top_logprobs=[{c[0]: -0.3, c[-1]: -1.4}] if req.logprobs else None)
        m = meta.get('method')
        if m == 'seal': return self.seal(req, meta['template'], schema or meta.get('reply_schema'))
        if m == 'keypoint':
            if stage == 'generate':
                tag = hashlib.sha1(_all(req).encode()).hexdigest()[:8]           # a checklist of the text it was shown
                return _lines_or_json(req, 'items', [f'Does the text keep point {i} of passage {tag}?' for i in range(1, N_QUESTIONS + 1)])
            n = meta['n_questions']
            if schema is not None: return json.dumps({'answers': [{'id': i, 'answer': 'no' if i % 2 else 'yes'} for i in range(1, n + 1)]})
            return '\n'.join(f"{i}. {'no' if i % 2 else 'yes'}" for i in range(1, n + 1))
        if m == 'interacteval': return self.interacteval(req, stage)
        if m == 'rocketeval' and stage == 'create':
            return '\n'.join(f'{i}. Does the answer address request part {i} directly?' for i in range(1, N_QUESTIONS + 1))
        if 'Q1' in _all(req) or re.search(r'^\s*1[.)]', user, re.M):                  # CheckEval answers: numbered verdicts
            return '\n'.join(f'Q{i}: Yes' for i in range(1, 40))
        if re.search(r'score|rate|rating', _all(req), re.I): return '3'                # G-Eval, SEEval, Likert
        return 'A short answer to the request.'                                          # MT-Bench responses written by the judge

    def seal(self, req, template, schema):
        props = (schema or {}).get('properties', {})
        if template == 'split_sentences':
            out = re.search(r'<(?:output|summary|response)[^>]*>(.*?)</', _user(req), re.S)
            return json.dumps({'sentences': [out.group(1).strip() if out else _user(req)]})
        if template == 'monadic_facts':
            return json.dumps({k: [f'{k.split("_")[0]} fact {i}' for i in range(1, 4)] for k in ('source_facts', 'reference_facts', 'output_facts')})
        if template == 'verify_support':
            n, ids = props['support']['minItems'], props['support']['items']['items']['enum']
            return json.dumps({'support': [[ids[0]] for _ in range(n)]})
        if template == 'rate_units':
            return json.dumps({'ratings': [props['ratings']['items']['minimum']] * props['ratings']['minItems']})
        v = props['verdicts']; n = v['minItems']; it = v['items']
        row = [0] * it['minItems'] if it.get('type') == 'array' else 0
        out = {'verdicts': [row] * n}
        if 'weights' in props: out['weights'] = [1] * props['weights']['minItems']
        return json.dumps(out)

    def interacteval(self, req, stage):
        qs = [f'Does the summary keep {c.lower()}?' for c in self.components]
        if stage == 'think_aloud': return json.dumps({'considerations': ['Sentences follow each other', 'One topic throughout', 'No abrupt jumps']})
        if stage == 'components': return json.dumps({'components': self.components})
        if stage == 'clustering': return json.dumps({'clusters': [{'component': c, 'attributes': ['One topic throughout']} for c in self.components]})
        if stage == 'key_questions': return json.dumps({'questions': [{'component': c, 'question': q} for c, q in zip(self.components, qs)]})
        if stage == 'sub_questions': return json.dumps({'sub_questions': [{'component': c, 'questions': [q]} for c, q in zip(self.components, qs)]})
        if stage == 'validation': return json.dumps({'questions': qs})
        n = req.meta['n_questions']
        if _schema(req) is None: return '\n'.join(f'{i}. yes' for i in range(1, n + 1))
        return json.dumps({'answers': [{'id': i, 'answer': 'yes'} for i in range(1, n + 1)]})


CASES = [   # (method, benchmark, dimensions, options)
    ('checkeval', 'summeval', ['coherence'], {}),
    ('geval', 'summeval', ['coherence'], {}),
    ('seeval', 'summeval', ['coherence'], {}),
    ('likert', 'summeval', ['coherence'], {}),
    ('seal', 'summeval', ['coherence', 'consistency'], {}),
    ('rocketeval', 'mt_bench', None, {'max_questions': N_QUESTIONS, 'creator': 'priced'}),
    ('keypoint', 'summeval', ['coherence'], {}),
    ('keypoint', 'summeval', ['coherence'], {'mode': 'f1', 'reference_field': 'reference'}),
    ('interacteval', 'summeval', ['coherence'], {}),
    ('interacteval', 'summeval', ['coherence'], {'checklist_source': 'build', 'attributes': 'upstream'}),
    ('interacteval', 'summeval', ['coherence'], {'checklist_source': 'build', 'attributes': 'think_aloud', 'condition': 'SL-TA'}),
]


def _run(method, benchmark, dims, options, judge, tmp_path):
    _, res = evaluate(method, benchmark, judge, limit=3, dimensions=dims, seed=0, root=tmp_path, save=False, options=dict(options))
    return res


def _unread(res) -> list[str]:
    "Why answers could not be read (a stage whose reply did not parse leaves such records)."
    return sorted({a.status for a in res.answers if not a.ok})


@pytest.mark.parametrize('schema', [True, False], ids=['json-schema', 'free-text'])
@pytest.mark.parametrize('method,benchmark,dims,options', CASES, ids=[f'{c[0]}-{i}' for i, c in enumerate(CASES)])
def test_dry_run_counts_every_request(method, benchmark, dims, options, schema, tmp_path):
    if method == 'rocketeval' and not data.available('benchmarks/mt_bench/question.jsonl'): pytest.skip('mt_bench not available')
    script = Scripted()
    real = FunctionJudge(script, name='priced', supports_json_schema=schema)
    real_res = _run(method, benchmark, dims, options, real, tmp_path)
    target = FunctionJudge(lambda r: pytest.fail('the dry run called its target'), name='priced', supports_json_schema=schema,
                           price_in=2.5, price_out=10.0)
    dry = DryRunJudge(target, list_items=N_QUESTIONS)
    dry_res = _run(method, benchmark, dims, options, dry, tmp_path)
    assert real.usage()['failed'] == 0
    # every stage of the real run was read: its answers parse (the scripted replies are well formed)
    assert real_res.answers and not [a for a in real_res.answers if not a.ok and not a.status.startswith('no ')], _unread(real_res)
    # and every stage of the dry run too: no answer says a checklist, decomposition or construction step failed
    assert not [a for a in dry_res.answers if a.value is None and re.search(r'checklist|decompos|no key|no list', a.status)], _unread(dry_res)
    assert dry.totals['requests'] == real.usage()['requests'] > 0
    assert dry.totals['to_send'] == script.calls and dry.totals['est_cost_max'] > 0   # distinct requests: the real run's sends
    assert target.usage()['requests'] == 0


def test_full_run_estimate_scales_only_the_per_item_stages(tmp_path, monkeypatch):
    """A full-benchmark estimate scales what grows with the items and counts once what runs per dimension: InteractEval's
    five construction steps and Check-Eval's criterion checklist are not multiplied by 1600/8 (they were: 1,850 and 1,800)."""
    monkeypatch.setenv('CHECKEVAL_RUNS', str(tmp_path))
    from checkeval.reproduction.index import estimate_full_run
    build = {'checklist_source': 'build', 'attributes': 'upstream'}
    est = estimate_full_run('interacteval', 'summeval', 30.0, 60.0, build, ['coherence'], sample_items=8)
    assert (est['requests'], est['fixed_requests']) == (5 + 1600, 5)
    ta = estimate_full_run('interacteval', 'summeval', 30.0, 60.0, {**build, 'attributes': 'think_aloud', 'condition': 'SL-TA'}, ['coherence'], sample_items=8)
    assert (ta['requests'], ta['fixed_requests']) == (1 + 5 + 1600, 6)
    kp = estimate_full_run('keypoint', 'summeval', 10.0, 30.0, None, ['coherence'], sample_items=8)
    assert (kp['requests'], kp['fixed_requests']) == (1 + 1600, 1)
    # the paper's 10 % sample over four dimensions: 4 × 5 construction requests + about 4 × 160 evaluations (≈660, was ≈1,600)
    ten = estimate_full_run('interacteval', 'summeval', 30.0, 60.0, {**build, 'sample_frac': 0.1})
    assert ten['fixed_requests'] == 20 and 560 <= ten['requests'] <= 760, ten


def test_methods_declare_how_exact_their_counts_are():
    from checkeval.reproduction.execution import dry_run_counts
    assert dry_run_counts('interacteval').startswith('exact (list answers')
    assert dry_run_counts('keypoint').startswith('exact (criterion-guided); upper bound')
