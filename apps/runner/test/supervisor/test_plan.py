import ast, json, os, tempfile, unittest

from support import SUPERVISOR_DIR, emitted_schema, sample_plan
from paddock_supervisor import plan
import supervisor


def plan_keys_read():
  """Top-level plan keys the supervisor's code reads: p[...], p.get(...), plan[...], self.p[...]."""
  keys = {}
  for root, _, files in os.walk(SUPERVISOR_DIR):
    for name in files:
      if not name.endswith('.py'): continue
      path = os.path.join(root, name)
      with open(path) as f: tree = ast.parse(f.read(), path)
      for node in ast.walk(tree):
        target, key = None, None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
          target, key = node.value, node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and node.args and isinstance(node.args[0], ast.Constant):
          target, key = node.func.value, node.args[0].value
        is_plan = (isinstance(target, ast.Name) and target.id in ('p', 'plan')) or (
          isinstance(target, ast.Attribute) and target.attr == 'p' and isinstance(target.value, ast.Name) and target.value.id == 'self')
        if is_plan and isinstance(key, str): keys.setdefault(key, '%s:%d' % (os.path.relpath(path, SUPERVISOR_DIR), node.lineno))
  return keys


class PlanContract(unittest.TestCase):
  def test_every_key_the_supervisor_reads_is_a_field_of_the_runners_plan_schema(self):
    declared = set(emitted_schema()['properties'])
    read = plan_keys_read()
    self.assertGreaterEqual(len(read), 15)
    self.assertEqual({k: where for k, where in read.items() if k not in declared}, {})

  def test_the_runners_schema_uses_only_what_the_validator_checks_and_admits_a_plan_as_the_runner_writes_it(self):
    plan.check(sample_plan(), emitted_schema())
    plan.check(sample_plan(cgroupKill='/sys/fs/cgroup/paddock/r.1/sbx-1/cgroup.kill', files=[]), emitted_schema())


class Validator(unittest.TestCase):
  def setUp(self):
    self.schema = emitted_schema()

  def errors(self, p):
    return plan.errors(self.schema, p)

  def test_a_renamed_field_is_named_twice_missing_and_unknown(self):
    p = sample_plan()
    p['logCap'] = p.pop('logCapBytes')
    self.assertEqual(self.errors(p), ['plan.logCapBytes: required', 'plan.logCap: not a field of the plan'])

  def test_types_bounds_and_nested_fields_are_named_with_their_rule(self):
    p = sample_plan(uid=-1, nofile=0, bwrap='bwrap', cpuSteady={'file': ''}, files=[{'rel': 'x', 'b64': 1}], execEnv={'A': 2})
    self.assertEqual(sorted(self.errors(p)), sorted([
      'plan.uid: must be >= 0', 'plan.nofile: must be > 0', 'plan.bwrap: must be of type array',
      'plan.cpuSteady.value: required', 'plan.cpuSteady.file: must be at least 1 characters',
      'plan.files[0].b64: must be of type string', 'plan.execEnv.A: must be of type string']))

  def test_a_boolean_is_not_an_integer(self):
    self.assertEqual(self.errors(sample_plan(uid=True)), ['plan.uid: must be of type integer'])

  def test_a_keyword_outside_the_subset_is_refused_not_skipped(self):
    with self.assertRaisesRegex(plan.PlanError, r'unsupported keyword\(s\) pattern at plan'):
      plan.errors({'type': 'string', 'pattern': '^a'}, 'a')

  def test_check_raises_with_every_violation(self):
    with self.assertRaisesRegex(plan.PlanError, r'plan\.dir: required; plan\.sandboxId: must be of type string'):
      p = sample_plan(sandboxId=3)
      del p['dir']
      plan.check(p, self.schema)


class ReadPlan(unittest.TestCase):
  def test_a_plan_that_does_not_match_ends_the_sandbox_failed_to_start_naming_the_field(self):
    schema_file = os.environ['PADDOCK_PLAN_SCHEMA']
    with tempfile.TemporaryDirectory() as d:
      p = sample_plan(dir=d)
      p['deadline'] = p.pop('deadlineMs')
      with open(os.path.join(d, 'plan.json'), 'w') as f: json.dump(p, f)
      with open(os.path.join(d, 'events.jsonl'), 'w') as f: f.write(json.dumps({'seq': 1, 'state': 'STATE_CREATING'}) + '\n')
      supervisor._schema = plan.load_schema(schema_file)
      r, w = os.pipe()
      saved = os.dup(1)
      os.dup2(w, 1)
      try: self.assertIsNone(supervisor.read_plan(os.path.join(d, 'plan.json')))
      finally:
        os.dup2(saved, 1)
        os.close(w)
      printed = json.loads(os.read(r, 65536))
      os.close(r)
      with open(os.path.join(d, 'events.jsonl')) as f: last = json.loads(f.read().splitlines()[-1])
      self.assertEqual(printed, last)
      self.assertEqual((last['seq'], last['sandboxId'], last['state'], last['reason']), (2, 'sbx-1', 'STATE_FAILED', 'FAILED_TO_START'))
      self.assertIn('plan.deadlineMs: required', last['message'])
      self.assertIn('plan.deadline: not a field of the plan', last['message'])


if __name__ == '__main__':
  unittest.main()
