"Every JSON schema the methods send passes OpenAI's strict structured-output rules, in the form a remote server is sent."
import pytest
from checkeval.judges import FunctionJudge
from checkeval.judges.engine import DryRunJudge
from checkeval.judges.strict import strict_form, strict_problems
from checkeval.runs import evaluate, list_methods

OPTIONS = {'rocketeval': {'creator': 'scripted'}, 'checkeval': {}, 'seal': {}, 'keypoint': {}, 'interacteval': {}}


class Recording(DryRunJudge):
    "Placeholders for every request (as a dry run), and every JSON schema the requests carry."
    def __init__(self):
        super().__init__(FunctionJudge(lambda r: 'yes', name='scripted'))
        self.schemas = []
    def _call_batch(self, requests):
        for r in requests:
            s = (r.constraint.json_schema if r.constraint is not None else None) or (r.meta or {}).get('reply_schema')
            if isinstance(s, dict): self.schemas.append(s)
        return super()._call_batch(requests)


def test_every_schema_the_methods_send_is_strict():
    found = {}
    for m in sorted(list_methods()):
        j = Recording()
        try: evaluate(m, 'summeval', j, limit=1, dimensions=['coherence'], save=False, options=OPTIONS.get(m, {}), make_judge=lambda n: j)
        except Exception: pass   # a method this benchmark or option set cannot run: its schemas are checked where it runs
        found[m] = j.schemas
    assert sum(map(len, found.values())) > 0, 'no schema was sent'
    print({m: len(s) for m, s in found.items()})
    bad = {m: sorted({p for s in ss for p in strict_problems(strict_form(s))}) for m, ss in found.items()}
    assert {m: p for m, p in bad.items() if p} == {}
