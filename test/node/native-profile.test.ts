import { expect, it } from "vitest";
import { groupSamples } from "../../scripts/lib/native-profile.mjs";

// Lines as `perf report --no-children --sort dso,sym --stdio` prints them for workerd.
const report = `# Samples: 24K of event 'cpu-clock:ppp'
#
     7.99%  [kernel.kallsyms]  [k] finish_task_switch.isra.0
     2.51%  workerd            [.] sqlite3VdbeExec
     2.10%  workerd            [.] jsonTranslateTextToBlob
     0.51%  workerd            [.] jsonbPayloadSize
     1.18%  libc.so.6          [.] __memmove_avx512_unaligned_erms
     0.98%  workerd            [.] tcmalloc::tcmalloc_internal::alloc_small_sampled_hooks_or_perthread<tcmalloc::tcmalloc_internal::TCMallocPolicy>
     0.62%  workerd            [.] v8::internal::MarkCompactCollector::ProcessMarkingWorklist<(v8::internal::MarkCompactCollector::MarkingWorklistProcessingMode)0>
     0.34%  workerd            [.] Builtins_RegExpPrototypeTest
     0.30%  [JIT] tid 10777    [.] LazyCompile:~readyEmail
     0.10%  workerd            [.] <tokio::runtime::io::registration::Registration>::poll_ready
     0.07%  workerd            [.] <rustls::msgs::deframer::handshake::HandshakeDeframer>::has_message_ready
     0.17%  workerd            [.] __dynamic_cast
`;

it("sums perf's samples by part of the runtime, SQLite's JSON functions apart from the rest of SQLite", () => {
  const groups = groupSamples(report);
  expect(groups.map(([name]) => name)).toEqual([
    "kernel",
    "SQLite: JSON functions",
    "SQLite: the rest",
    "memory copies",
    "allocator",
    "V8: garbage collection",
    "V8: builtins and runtime",
    "JavaScript (JIT code)",
    "other",
    "workerd and KJ",
    "TLS and crypto",
  ]);
  const share = new Map(groups);
  expect(share.get("SQLite: JSON functions")).toBeCloseTo(2.61);
  expect(share.get("SQLite: the rest")).toBeCloseTo(2.51);
  expect(share.get("V8: garbage collection")).toBeCloseTo(0.62);
  expect([...share.values()].reduce((sum, value) => sum + value, 0)).toBeCloseTo(16.87);
});
