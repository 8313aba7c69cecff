import os, struct, tempfile, unittest

from support import SUPERVISOR_DIR
from paddock_supervisor import execd, seccomp


class Sources(unittest.TestCase):
  def test_the_modules_under_test_are_the_checkout_s_not_an_installed_copy(self):
    for mod in (execd, seccomp):
      self.assertEqual(os.path.commonpath([mod.__file__, os.path.normpath(SUPERVISOR_DIR)]), os.path.normpath(SUPERVISOR_DIR))


class Seccomp(unittest.TestCase):
  def test_the_program_denies_each_listed_syscall_and_allows_the_rest(self):
    arch, nrs = seccomp.DENY[os.uname().machine]
    prog = seccomp.seccomp_program()
    self.assertEqual(len(prog) % 8, 0)
    ins = [struct.unpack('<HBBI', prog[i:i + 8]) for i in range(0, len(prog), 8)]
    self.assertEqual(ins[0], (0x20, 0, 0, 4))             # load the arch
    self.assertEqual(ins[1], (0x15, 1, 0, arch))          # native arch: skip the deny
    self.assertEqual(ins[-1], (0x06, 0, 0, 0x7FFF0000))   # allow
    checked = [k for code, _, _, k in ins if code == 0x15][1:]
    self.assertEqual(checked, nrs)
    self.assertEqual(len(set(nrs)), len(nrs))


class ResolveCommand(unittest.TestCase):
  def test_a_name_is_looked_up_on_the_path_and_a_path_is_taken_as_is(self):
    with tempfile.TemporaryDirectory() as d:
      exe = os.path.join(d, 'tool')
      with open(exe, 'w') as f: f.write('#!/bin/sh\n')
      os.chmod(exe, 0o755)
      os.mkdir(os.path.join(d, 'dir'))
      self.assertEqual(execd.resolve_command('tool', '/nonexistent:' + d), exe)
      self.assertEqual(execd.resolve_command('./x/y', ''), './x/y')
      with self.assertRaises(FileNotFoundError): execd.resolve_command('dir', d)
      with self.assertRaises(FileNotFoundError): execd.resolve_command('missing', d)


if __name__ == '__main__':
  unittest.main()
