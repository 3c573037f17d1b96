// PURE: whether one control plane may go down now, from the etcd member list and each member's health.
import * as assert from "node:assert/strict";
import type { EtcdMemberHealth } from "../../../provider/rollout/ports";
import { etcdHealthOf, etcdVerdict } from "../../../provider/talos";

const member = (name: string, n: number, o: Partial<EtcdMemberHealth> = {}): EtcdMemberHealth => ({
  id: n.toString(16).padStart(16, "0"), name, address: `10.5.0.${n}`, learner: false, leader: n === 1, healthy: true, ...o,
});

describe("talos: etcd verdicts (may this control plane go down now?)", () => {
  it("three healthy voters: any one may go, by member name or address", () => {
    const ms = [member("cp-1", 1), member("cp-2", 2), member("cp-3", 3)];
    for (const n of ["cp-1", "cp-2", "10.5.0.3"]) assert.deepEqual(etcdVerdict(ms, n), { ok: true });
    const h = etcdHealthOf(ms);
    assert.equal(h.quorum, 2);
    assert.equal(h.healthy, true);
    assert.deepEqual(h.canTakeDown("cp-2"), { ok: true });
  });

  it("any unhealthy member holds every control plane (waiting may help), naming the member and why", () => {
    const ms = [member("cp-1", 1), member("cp-2", 2, { healthy: false, problem: "etcdserver: no leader" }), member("cp-3", 3)];
    for (const n of ["cp-1", "cp-2", "cp-3"]) {
      const v = etcdVerdict(ms, n);
      assert.equal(v.ok, false);
      assert.equal(v.permanent, undefined);
      assert.equal(v.reason, `etcd is not healthy, so control plane ${n} must not go down yet: member cp-2 (0000000000000002): etcdserver: no leader`);
    }
  });

  it("quorum: 5 voters tolerate losing 2; with one already down, the next is fine only while 3 stay healthy", () => {
    const five = [1, 2, 3, 4, 5].map((i) => member(`cp-${i}`, i));
    assert.deepEqual(etcdVerdict(five, "cp-5"), { ok: true });
    assert.equal(etcdHealthOf(five).quorum, 3);
  });

  it("two voters: never (permanent), saying to run three; one voter: always (nothing keeps it up through its own reboot)", () => {
    const v = etcdVerdict([member("cp-1", 1), member("cp-2", 2)], "cp-2");
    assert.equal(v.ok, false);
    assert.equal(v.permanent, true);
    assert.equal(v.reason, "taking control plane cp-2 down would lose etcd quorum: 1 of 2 voting members would be left healthy, 2 are needed; " +
      'a cluster with 2 control planes cannot keep quorum through any reboot — run 3, or accept the outage with etcdQuorumLoss: "allow"');
    assert.deepEqual(etcdVerdict([member("cp-1", 1)], "cp-1"), { ok: true });
  });

  it('issue 25: two voters with etcdQuorumLoss "allow": may go, marked as a quorum loss; every other rule kept', () => {
    const two = [member("cp-1", 1), member("cp-2", 2)];
    assert.deepEqual(etcdVerdict(two, "cp-2", true), { ok: true, quorumLoss: true });
    assert.deepEqual(etcdHealthOf(two).canTakeDown("cp-1", { allowQuorumLoss: true }), { ok: true, quorumLoss: true });
    const sick = [member("cp-1", 1), member("cp-2", 2, { healthy: false, problem: "etcdserver: no leader" })];
    for (const n of ["cp-1", "cp-2"]) {
      const v = etcdVerdict(sick, n, true);
      assert.equal(v.ok, false, "an unhealthy member still holds it (the member back and healthy before the next)");
      assert.match(v.reason!, /etcd is not healthy/);
    }
    assert.deepEqual(etcdVerdict([member("cp-1", 1), member("cp-2", 2), member("cp-3", 3)], "cp-1", true), { ok: true }, "three voters lose nothing");
    assert.equal(etcdVerdict(two, "cp-9", true).ok, false, "no member: still refused");
  });

  it("learners do not vote: a learner may go; three members with one learner behave like two voters", () => {
    const ms = [member("cp-1", 1), member("cp-2", 2), member("cp-3", 3, { learner: true })];
    assert.deepEqual(etcdVerdict(ms, "cp-3"), { ok: true });
    assert.equal(etcdVerdict(ms, "cp-1").permanent, true);
    assert.equal(etcdHealthOf(ms).quorum, 2);
  });

  it("a node without a member is not waved through", () => {
    const v = etcdVerdict([member("cp-1", 1), member("", 7, { healthy: false, problem: "not started" })], "w-1");
    assert.equal(v.ok, false);
    assert.match(v.reason!, /etcd has no member for control plane w-1 \(members: cp-1, 0000000000000007\)/);
  });
});
