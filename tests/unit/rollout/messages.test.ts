import assert from "node:assert/strict";
import fc from "fast-check";
import * as msg from "../../../provider/rollout/messages";
import { goQuote } from "../../../provider/template/goquote";

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

describe("rollout/messages", () => {
  describe("truncateReason", () => {
    it("keeps texts of at most 256 bytes unchanged", () => {
      assert.equal(msg.truncateReason(""), "");
      assert.equal(msg.truncateReason("ceph is not healthy"), "ceph is not healthy");
      const exact = "a".repeat(256);
      assert.equal(msg.truncateReason(exact), exact);
      const multi = "é".repeat(128); // 256 bytes
      assert.equal(msg.truncateReason(multi), multi);
    });

    it("cuts ASCII at 256 bytes and appends ...", () => {
      const out = msg.truncateReason("a".repeat(257));
      assert.equal(out, "a".repeat(256) + "...");
      assert.equal(bytes(out), 259);
      assert.equal(msg.truncateReason("b".repeat(1000)), "b".repeat(256) + "...");
    });

    it("never splits a 2-byte character at the boundary", () => {
      // 255 ASCII bytes, then "é" (2 bytes) would end at byte 257
      const out = msg.truncateReason("a".repeat(255) + "é" + "zz");
      assert.equal(out, "a".repeat(255) + "...");
      assert.equal(bytes(out), 258);
      // "é" ending exactly at byte 256 is kept
      assert.equal(msg.truncateReason("a".repeat(254) + "é" + "z"), "a".repeat(254) + "é...");
    });

    it("never splits a 3-byte character at the boundary", () => {
      for (const pad of [254, 255]) {
        assert.equal(msg.truncateReason("a".repeat(pad) + "€" + "x"), "a".repeat(pad) + "...", `pad ${pad}`);
      }
      assert.equal(msg.truncateReason("a".repeat(253) + "€" + "x"), "a".repeat(253) + "€...");
    });

    it("never splits a 4-byte character (surrogate pair) at the boundary", () => {
      for (const pad of [253, 254, 255]) {
        const out = msg.truncateReason("a".repeat(pad) + "😀" + "x");
        assert.equal(out, "a".repeat(pad) + "...", `pad ${pad}`);
      }
      assert.equal(msg.truncateReason("a".repeat(252) + "😀" + "x"), "a".repeat(252) + "😀...");
      // all 4-byte: 64 emoji are exactly 256 bytes
      assert.equal(msg.truncateReason("😀".repeat(65)), "😀".repeat(64) + "...");
    });

    it("keeps newlines (the step detail is not collapsed)", () => {
      assert.equal(msg.truncateReason("line 1\nline 2"), "line 1\nline 2");
    });

    it("property: ≤ 259 bytes, valid UTF-8, a prefix of the input plus ... only when cut", () => {
      const text = fc.oneof(
        fc.string({ unit: "binary", maxLength: 400 }),
        fc.string({ unit: "grapheme", maxLength: 300 }),
        fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\n"), maxLength: 300 }),
      );
      fc.assert(
        fc.property(text, (s) => {
          const out = msg.truncateReason(s);
          assert.ok(bytes(out) <= 259);
          // valid UTF-8: encode + strict decode round-trips
          assert.equal(new TextDecoder("utf-8", { fatal: true }).decode(new TextEncoder().encode(out)), out);
          assert.ok(!/[\uD800-\uDBFF]$/.test(out.replace(/\.\.\.$/, "")), "no dangling high surrogate");
          if (bytes(s) <= 256) {
            assert.equal(out, s);
          } else {
            assert.ok(out.endsWith("..."));
            const kept = out.slice(0, -3);
            assert.ok(s.startsWith(kept));
            assert.ok(bytes(kept) <= 256);
            // maximal: the next whole character would not fit
            const next = String.fromCodePoint(s.codePointAt(kept.length)!);
            assert.ok(bytes(kept) + bytes(next) > 256);
          }
        }),
        { numRuns: 500 },
      );
    });
  });

  describe("singleLine", () => {
    it("collapses every whitespace run to a single space and trims", () => {
      assert.equal(msg.singleLine("  ceph\tis\n\nnot   healthy \r\n"), "ceph is not healthy");
      assert.equal(msg.singleLine(""), "");
    });
  });

  describe("goQuote (Go strconv.Quote)", () => {
    it("quotes plain ids", () => {
      assert.equal(goQuote("cluster-prod-ceph"), '"cluster-prod-ceph"');
      assert.equal(goQuote(""), '""');
    });
    it("escapes quotes, backslashes and control characters like Go", () => {
      assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
      assert.equal(goQuote("a\nb\tc\r\x07\x08\x0c\x0b"), '"a\\nb\\tc\\r\\a\\b\\f\\v"');
      assert.equal(goQuote("\x00\x1b\x7f"), '"\\x00\\x1b\\x7f"');
    });
    it("keeps printable unicode and escapes non-printable runes", () => {
      assert.equal(goQuote("café 😀"), '"café 😀"');
      assert.equal(goQuote("a\u00a0b"), '"a\\u00a0b"'); // no-break space is not printable in Go
      assert.equal(goQuote("\u200b"), '"\\u200b"');
      assert.equal(goQuote("\u{e0001}"), '"\\U000e0001"');
      assert.equal(goQuote("\ud800"), '"\ufffd"');
    });
  });

  describe("formatDuration (Go style)", () => {
    it("formats like time.Duration.String rounded to seconds", () => {
      assert.equal(msg.formatDuration(350), "350ms");
      assert.equal(msg.formatDuration(0), "0ms");
      assert.equal(msg.formatDuration(1000), "1s");
      assert.equal(msg.formatDuration(41_400), "41s");
      assert.equal(msg.formatDuration(30_000), "30s");
      assert.equal(msg.formatDuration(125_000), "2m5s");
      assert.equal(msg.formatDuration(15 * 60_000), "15m0s");
      assert.equal(msg.formatDuration(3_600_000), "1h0m0s");
      assert.equal(msg.formatDuration(3_723_000), "1h2m3s");
    });
  });

  describe("status and step texts (Omni §3.4, §4.5)", () => {
    it("status", () => {
      assert.equal(msg.statusUpdating(2, 5, 4), "updating machines 2/5");
      assert.equal(msg.statusUpdating(5, 5, 0), "updating");
      assert.equal(msg.statusReverting(1, 3), "reverting update 1/3");
      assert.equal(msg.currentMachineNumber(5, 5), 1);
      assert.equal(msg.currentMachineNumber(5, 1), 5);
      assert.equal(msg.currentMachineNumber(5, 0), 5);
    });
    it("step", () => {
      assert.equal(msg.stepCurrentMachines(["cp-1"]), "current machine: cp-1");
      assert.equal(msg.stepCurrentMachines(["w-1", "w-2"]), "current machines: w-1, w-2");
      assert.equal(msg.STEP_NO_MACHINES_UPGRADING, "no machines are currently upgrading");
      assert.equal(msg.STEP_WAITING_FOR_READY, "waiting for the cluster to be ready");
      assert.equal(
        msg.healthcheckStep([{ id: "cluster-foo-ceph", detail: "waiting to complete" }]),
        'waiting for healthchecks to pass: "cluster-foo-ceph": waiting to complete',
      );
      assert.equal(
        msg.healthcheckStep([
          { id: "cluster-foo-ceph", detail: "ceph is not healthy, holding upgrade: HEALTH_WARN\n1 osd down" },
          { id: 'we"ird', detail: "waiting to complete" },
        ]),
        'waiting for healthchecks to pass: "cluster-foo-ceph": ceph is not healthy, holding upgrade: HEALTH_WARN\n1 osd down; "we\\"ird": waiting to complete',
      );
      const long = msg.healthcheckStep([{ id: "c", detail: "x".repeat(300) }]);
      assert.equal(long, `waiting for healthchecks to pass: "c": ${"x".repeat(256)}...`);
    });
    it("Job condition fallback", () => {
      assert.equal(
        msg.jobConditionReason("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        "BackoffLimitExceeded: Job has reached the specified backoff limit",
      );
      assert.equal(msg.jobConditionReason("", ""), "healthcheck job failed");
      assert.equal(msg.jobConditionReason(undefined, "boom"), "healthcheck job failed: boom");
    });
  });

  describe("failure reasons", () => {
    it("say what failed, where, and what to do", () => {
      const resume = "run `pulumi up` again to resume from the first node not on the target";
      assert.equal(
        msg.reasonHoldTimeout(3_600_000, 2, 4, '"cluster-prod-ceph": ceph is not healthy'),
        `healthchecks held the upgrade longer than holdTimeout 1h0m0s before wave 2/4: "cluster-prod-ceph": ceph is not healthy; fix the failing checks or raise holdTimeout, then ${resume}`,
      );
      assert.equal(
        msg.reasonNodeTimeout("cp-1", "v1.13.2", 900_000, "boot id unchanged"),
        `node cp-1 was not back on v1.13.2 within nodeTimeout 15m0s: boot id unchanged; inspect the node (talosctl dmesg, talosctl version), then ${resume}`,
      );
      assert.equal(msg.reasonCancelled("w-2", 3, 5), `upgrade cancelled before node w-2 (3/5 machines on the target); ${resume}`);
      assert.equal(
        msg.reasonNotReadyTimeout(60_000, ["w-2"]),
        `the cluster was not ready within holdTimeout 1m0s (not ready: w-2); make the nodes Ready or raise holdTimeout, then ${resume}`,
      );
      assert.equal(
        msg.reasonNodeWrongVersion("w-1", "v1.12.3", "v1.13.2"),
        `node w-1 came back on v1.12.3 instead of v1.13.2; the node is not retried automatically: inspect it, then ${resume}`,
      );
      // Talos confirmed the target: a stale osImage is the kubelet, not the node running the old version.
      assert.equal(
        msg.reasonKubeletNotReported("w-1", "v1.12.3", "v1.13.2", 60_000),
        "node w-1 is back on v1.13.2 (Talos confirmed its new boot), but its Kubernetes Node still reports v1.12.3 after nodeTimeout 1m0s: " +
          `its kubelet has not reported since the reboot; check the kubelet (talosctl service kubelet, talosctl logs kubelet), then ${resume}`,
      );
      assert.equal(
        msg.reasonCancelled("w-2", 3, 5, "stop requested by ops@laptop at 2026-12-01T10:00:00.000Z (talos-gate stop)"),
        `upgrade cancelled before node w-2 (3/5 machines on the target): stop requested by ops@laptop at 2026-12-01T10:00:00.000Z (talos-gate stop); ${resume}`,
      );
      assert.equal(
        msg.reasonSetAside(["w-7"], 999, 1000),
        `999/1000 machines on the target; set aside because they were not ready when their turn came: w-7; make them Ready, then ${resume}`,
      );
    });
  });
});
