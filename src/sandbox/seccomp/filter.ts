/**
 * The seccomp filter every sandboxed command runs under, at both levels (SPEC §20): the
 * kernel checks these syscalls' arguments where paths and mounts cannot help.
 *  - no setuid/setgid file is made (chmod, open/creat/mknod with those mode bits);
 *  - no TIOCSTI/TIOCLINUX (typing into a terminal outside), no sethostname;
 *  - no io_uring (its operations bypass seccomp), no 32-bit or x32 syscalls (their numbers differ);
 *  - unless unix sockets are allowed, no socket(AF_UNIX): a program outside listening on a
 *    unix socket (tmux, ssh-agent, Docker, D-Bus) cannot be reached, wherever its socket
 *    file lies. socketpair() stays: pipes between a program's own processes keep working.
 * The program is classic BPF (struct sock_filter[]), as bwrap's --seccomp and
 * prctl(PR_SET_SECCOMP) take it.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;

const RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;
const retErrno = (errno: number) => 0x00050000 | errno;

const SETID_BITS = 0o6000;
/** O_CREAT, and O_TMPFILE's own bit: the opens whose mode argument counts. */
const CREATING = 0o100 | 0o20000000;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const AF_UNIX = 1;

type Rule =
  | { nr: number; deny: number } // always refused with this errno
  | { nr: number; argMask: { arg: number; mask: number } } // refused when the argument has any of these bits
  | { nr: number; argEquals: { arg: number; values: number[] } }
  | { nr: number; creating: { flags: number; mode: number } }; // refused when creating with setid mode bits

/** Syscall numbers per architecture (the two Linux builds of agent-shell). */
const NR = {
  x64: { chmod: 90, fchmod: 91, fchmodat: 268, fchmodat2: 452, open: 2, openat: 257, creat: 85, openat2: 437, mknod: 133, mknodat: 259, ioctl: 16, sethostname: 170, setdomainname: 171, ioUringSetup: 425, socket: 41 },
  arm64: { fchmod: 52, fchmodat: 53, fchmodat2: 452, openat: 56, openat2: 437, mknodat: 33, ioctl: 29, sethostname: 161, setdomainname: 162, ioUringSetup: 425, socket: 198 },
} as const;

function rules(nr: Record<string, number>, allowUnixSockets: boolean): Rule[] {
  const list: Rule[] = [];
  const setid = (name: string, arg: number) => nr[name] !== undefined && list.push({ nr: nr[name]!, argMask: { arg, mask: SETID_BITS } });
  setid("chmod", 1);
  setid("fchmod", 1);
  setid("fchmodat", 2);
  setid("fchmodat2", 2);
  setid("creat", 1);
  setid("mknod", 1);
  setid("mknodat", 2);
  if (nr.open !== undefined) list.push({ nr: nr.open, creating: { flags: 1, mode: 2 } });
  list.push({ nr: nr.openat!, creating: { flags: 2, mode: 3 } });
  list.push({ nr: nr.openat2!, deny: ENOSYS }); // its how-struct is out of a filter's reach; libc falls back to openat
  list.push({ nr: nr.ioctl!, argEquals: { arg: 1, values: [TIOCSTI, TIOCLINUX] } });
  list.push({ nr: nr.sethostname!, deny: EPERM }, { nr: nr.setdomainname!, deny: EPERM });
  list.push({ nr: nr.ioUringSetup!, deny: EPERM });
  if (!allowUnixSockets) list.push({ nr: nr.socket!, argEquals: { arg: 0, values: [AF_UNIX] } });
  return list;
}

/** One BPF instruction; jumps name labels, resolved by assemble(). */
type Insn = { code: number; k: number | string; jt?: string; jf?: string } | { label: string };

const LD_ABS = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const JA = 0x05;
const RET = 0x06;
const argLow = (i: number) => 16 + 8 * i; // seccomp_data.args[i], low 32 bits (little-endian)

function archBlock(prefix: string, list: Rule[]): Insn[] {
  const out: Insn[] = [{ code: LD_ABS, k: 0 }];
  if (prefix === "x64") out.push({ code: JGE, k: 0x40000000, jt: "deny-abi", jf: `${prefix}-0` }); // x32 numbers
  list.forEach((rule, i) => {
    const next = `${prefix}-${i + 1}`;
    out.push({ label: `${prefix}-${i}` }, { code: JEQ, k: rule.nr, jf: next });
    if ("deny" in rule) out.push({ code: RET, k: retErrno(rule.deny) });
    else if ("argMask" in rule) {
      out.push({ code: LD_ABS, k: argLow(rule.argMask.arg) }, { code: JSET, k: rule.argMask.mask, jt: "deny-eperm", jf: "allow" });
    } else if ("argEquals" in rule) {
      out.push({ code: LD_ABS, k: argLow(rule.argEquals.arg) });
      for (const v of rule.argEquals.values) out.push({ code: JEQ, k: v, jt: rule.nr === NR.x64.socket || rule.nr === NR.arm64.socket ? "deny-eacces" : "deny-eperm" });
      out.push({ code: JA, k: "allow" });
    } else {
      out.push({ code: LD_ABS, k: argLow(rule.creating.flags) }, { code: JSET, k: CREATING, jf: "allow" });
      out.push({ code: LD_ABS, k: argLow(rule.creating.mode) }, { code: JSET, k: SETID_BITS, jt: "deny-eperm", jf: "allow" });
    }
  });
  out.push({ label: `${prefix}-${list.length}` }, { code: JA, k: "allow" });
  return out;
}

/** The filter's bytes (struct sock_filter[]), for bwrap's --seccomp fd or prctl(PR_SET_SECCOMP). */
export function seccompProgram(opts: { allowUnixSockets: boolean }): Buffer {
  cache[String(opts.allowUnixSockets)] ??= assemble([
    { code: LD_ABS, k: 4 },
    { code: JEQ, k: AUDIT_ARCH_X86_64, jf: "not-x64" },
    ...archBlock("x64", rules(NR.x64, opts.allowUnixSockets)),
    { label: "not-x64" },
    { code: JEQ, k: AUDIT_ARCH_AARCH64, jt: "arm64", jf: "deny-abi" }, // i386 and anything else
    { label: "arm64" },
    ...archBlock("arm64", rules(NR.arm64, opts.allowUnixSockets)),
    { label: "allow" },
    { code: RET, k: RET_ALLOW },
    { label: "deny-eperm" },
    { code: RET, k: retErrno(EPERM) },
    { label: "deny-eacces" },
    { code: RET, k: retErrno(EACCES) },
    { label: "deny-abi" },
    { code: RET, k: retErrno(ENOSYS) },
  ]);
  return cache[String(opts.allowUnixSockets)]!;
}
const cache: Record<string, Buffer> = {};

/** Lays the instructions out, resolving each label to a forward jump offset. */
function assemble(program: Insn[]): Buffer {
  const at = new Map<string, number>();
  const insns: Exclude<Insn, { label: string }>[] = [];
  for (const insn of program) {
    if ("label" in insn) at.set(insn.label, insns.length);
    else insns.push(insn);
  }
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach((insn, i) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const target = at.get(label);
      if (target === undefined || target <= i) throw new Error(`seccomp: bad jump to ${label}`);
      return target - i - 1;
    };
    let k = insn.k;
    let jt = offset(insn.jt);
    const jf = offset(insn.jf);
    if (insn.code === JA) {
      k = offset(k as string);
      jt = 0;
    }
    if (typeof k !== "number" || jt > 255 || jf > 255) throw new Error("seccomp: jump too far");
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
