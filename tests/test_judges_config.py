"The papers' judges as configured: G-Eval's allowed answers are enforced wherever the serving backend can do it."
from pathlib import Path
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_self_hosted_judges_enforce_the_allowed_answers():
    "A judge served by vLLM's OpenAI-compatible server (an entry reached through base_url_env) sends the request's choices in the form vLLM >= 0.12 reads."
    judges = yaml.safe_load((ROOT/'configs'/'judges.yaml').read_text())['judges']
    served = {k: v for k, v in judges.items() if v.get('backend') == 'openai' and v.get('base_url_env')}
    assert served, 'no self-hosted entry found'
    loose = sorted(k for k, v in served.items() if v.get('choice_mode') not in ('structured_outputs', 'grammar'))
    assert not loose, f'set choice_mode: structured_outputs (vLLM >= 0.12) on {loose}'
    assert 'guided_choice' not in {v.get('choice_mode') for v in judges.values()}
