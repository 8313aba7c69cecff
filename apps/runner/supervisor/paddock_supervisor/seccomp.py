"""The sandbox's seccomp filter: a classic BPF deny-list, assembled here (no libseccomp)."""
import ctypes, errno, os, struct

from paddock_supervisor.sysutil import libc, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER

# Syscalls no sandbox needs and that widen the kernel attack surface.
DENY = {
  'x86_64': (0xC000003E, [101, 250, 248, 249, 321, 298, 425, 426, 427, 323, 246, 320, 175, 313, 176, 165, 166,
                          155, 167, 168, 169, 310, 311, 304, 303, 308, 272, 442, 428, 429, 430, 431, 432, 433, 103, 163, 179]),
  'aarch64': (0xC00000B7, [117, 219, 217, 218, 280, 241, 425, 426, 427, 282, 104, 294, 105, 273, 106, 40, 39,
                           41, 224, 225, 142, 270, 271, 265, 264, 268, 97, 442, 428, 429, 430, 431, 432, 433, 116, 89]),
}

def seccomp_program():
  arch, nrs = DENY[os.uname().machine]
  ins = []
  def op(code, jt, jf, k): ins.append(struct.pack('<HBBI', code, jt, jf, k))
  deny = 0x00050000 | errno.EPERM
  op(0x20, 0, 0, 4)                       # A = seccomp_data.arch
  op(0x15, 1, 0, arch)                    # native arch? skip the deny
  op(0x06, 0, 0, deny)
  op(0x20, 0, 0, 0)                       # A = seccomp_data.nr
  if arch == 0xC000003E:
    op(0x35, 0, 1, 0x40000000)            # x32 ABI: deny
    op(0x06, 0, 0, deny)
  for nr in nrs:
    op(0x15, 0, 1, nr)
    op(0x06, 0, 0, deny)
  op(0x06, 0, 0, 0x7FFF0000)              # allow
  return b''.join(ins)

def install_seccomp(prog):
  buf = ctypes.create_string_buffer(prog, len(prog))
  class FProg(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
  fp = FProg(len(prog) // 8, ctypes.addressof(buf))
  if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0: raise OSError(ctypes.get_errno(), 'no_new_privs')
  if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fp), 0, 0) != 0:
    raise OSError(ctypes.get_errno(), 'seccomp')
