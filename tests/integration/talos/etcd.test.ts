// etcd over the Talos machine API, real wire shapes against the simulated control planes: EtcdMemberList,
// EtcdStatus, EtcdForfeitLeadership, and the port's etcdHealth / canTakeDown / forfeitLeadership — members, leader
// tracking through reboots, a member unhealthy for a while after its node boots, learners and quorum.
import * as assert from "node:assert/strict";
import { formatMemberId } from "../../../sim/talos";
import { controlPlanes, Harness, rejectsWith, spec, startHarness } from "./helpers";

const until = async (what: string, pred: () => boolean | Promise<boolean>, ms = 10000) => {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("talos: etcd of three control planes", function () {
  this.timeout(30000);
  let h: Harness;
  before(async () => {
    h = await startHarness({
      nodes: [
        ...controlPlanes(3, "v1.13.1"),
        spec("w-1", 5, "v1.13.1"),
      ],
      timing: { pullMs: 10, installMs: 10, downMs: 500 },
      etcd: { unhealthyAfterBootMs: 1200 },
    });
  });
  after(async () => h?.stop());

  it("EtcdMemberList: one member per control plane (id %016x, hostname, peer/client URLs, learner), the same through every control plane", async () => {
    const lists = await Promise.all(["10.5.0.2", "10.5.0.3", "10.5.0.4"].map((n) => h.api.client.etcdMemberList(n)));
    for (const l of lists) assert.deepEqual(l, lists[0]);
    assert.deepEqual(lists[0].map((m) => m.name), ["cp-1", "cp-2", "cp-3"]);
    const m = lists[0][1];
    assert.equal(m.id, formatMemberId(h.sim.etcd.member("cp-2")!.id));
    assert.match(m.id, /^[0-9a-f]{16}$/);
    assert.deepEqual(m.peerUrls, ["https://10.5.0.3:2380"]);
    assert.deepEqual(m.clientUrls, ["https://10.5.0.3:2379"]);
    assert.equal(m.learner, false);
  });

  it("on a worker the etcd calls are UNIMPLEMENTED, as Talos answers", async () => {
    const e = await rejectsWith(h.api.client.etcdMemberList("10.5.0.5"), "UNIMPLEMENTED");
    assert.equal(e.detail, "member list is only available on control plane nodes");
    await rejectsWith(h.api.client.etcdStatus("10.5.0.5"), "UNIMPLEMENTED");
    await rejectsWith(h.api.forfeitLeadership("10.5.0.5"), "UNIMPLEMENTED");
  });

  it("EtcdStatus: each member's own id and the one leader they agree on", async () => {
    const st = await Promise.all(["10.5.0.2", "10.5.0.3", "10.5.0.4"].map((n) => h.api.client.etcdStatus(n)));
    assert.deepEqual(st.map((s) => s.memberId), ["cp-1", "cp-2", "cp-3"].map((n) => formatMemberId(h.sim.etcd.member(n)!.id)));
    assert.equal(new Set(st.map((s) => s.leaderId)).size, 1);
    assert.equal(st[0].leaderId, formatMemberId(h.sim.etcd.leaderMember!.id));
    assert.deepEqual(st.map((s) => s.errors), [[], [], []]);
  });

  it("etcdHealth: all healthy, the leader marked, any one member may go down", async () => {
    const health = await h.api.etcdHealth("10.5.0.3");
    assert.equal(health.healthy, true);
    assert.equal(health.quorum, 2);
    assert.deepEqual(health.members.map((m) => [m.name, m.address, m.healthy]), [["cp-1", "10.5.0.2", true], ["cp-2", "10.5.0.3", true], ["cp-3", "10.5.0.4", true]]);
    assert.deepEqual(health.members.filter((m) => m.leader).map((m) => m.name), [h.sim.etcd.leaderMember!.name]);
    for (const n of ["cp-1", "10.5.0.3", "cp-3"]) assert.deepEqual(health.canTakeDown(n), { ok: true });
    assert.match(health.canTakeDown("w-1").reason!, /etcd has no member for control plane w-1 \(members: cp-1, cp-2, cp-3\)/);
  });

  it("forfeitLeadership: the leader hands over (the new leader's name), a follower answers \"\"", async () => {
    const leader = h.sim.etcd.leaderMember!;
    const follower = h.sim.etcd.list().find((m) => m !== leader)!;
    assert.equal(await h.api.forfeitLeadership(follower.node.address), "");
    const next = await h.api.forfeitLeadership(leader.node.address);
    assert.notEqual(next, leader.name);
    assert.equal(next, h.sim.etcd.leaderMember!.name);
    const st = await h.api.client.etcdStatus(leader.node.address);
    assert.equal(st.leaderId, formatMemberId(h.sim.etcd.leaderMember!.id));
  });

  it("a rebooting member: unreachable while down, then 'no leader' while it catches up (the knob), then healthy; the leader moves off it", async () => {
    const leaderName = h.sim.etcd.leaderMember!.name;
    const node = h.sim.node(leaderName);
    const others = h.sim.etcd.list().filter((m) => m.name !== leaderName).map((m) => m.node.address);
    const down = new Promise<void>((r) => h.sim.once("down", () => r()));
    await h.api.client.reboot(node.address);
    await down;
    let health = await h.api.etcdHealth(others[0]);
    const sick = health.members.find((m) => m.name === leaderName)!;
    assert.equal(sick.healthy, false);
    assert.match(sick.problem!, /connection refused/);
    assert.notEqual(health.members.find((m) => m.leader)?.name, leaderName, "a new leader among the others");
    const verdict = health.canTakeDown(others[0]);
    assert.equal(verdict.ok, false);
    assert.equal(verdict.permanent, undefined);
    assert.match(verdict.reason!, new RegExp(`etcd is not healthy, so control plane \\S+ must not go down yet: member ${leaderName} \\([0-9a-f]{16}\\): .*connection refused`));
    await until("the node boots", () => node.up);
    health = await h.api.etcdHealth(others[0]);
    assert.equal(health.members.find((m) => m.name === leaderName)!.problem, "etcdserver: no leader");
    assert.equal(health.healthy, false);
    await until("the member catches up", async () => (await h.api.etcdHealth(others[0])).healthy);
    assert.equal((await h.api.etcdHealth(node.address)).canTakeDown(node.address).ok, true);
  });

  it("a learner does not count for quorum", async () => {
    h.sim.etcd.setLearner("cp-3", true);
    try {
      const health = await h.api.etcdHealth("10.5.0.2");
      assert.equal(health.members.find((m) => m.name === "cp-3")!.learner, true);
      assert.equal(health.quorum, 2);
      const v = health.canTakeDown("cp-1");
      assert.equal(v.ok, false);
      assert.equal(v.permanent, true);
      assert.match(v.reason!, /taking control plane cp-1 down would lose etcd quorum: 1 of 2 voting members would be left healthy, 2 are needed/);
      assert.equal(health.canTakeDown("cp-3").ok, true, "a learner may go");
    } finally {
      h.sim.etcd.setLearner("cp-3", false);
    }
  });
});

describe("talos: etcd of one and of two control planes", function () {
  this.timeout(20000);
  let one: Harness;
  let two: Harness;
  before(async () => {
    one = await startHarness({ nodes: [spec("cp-1", 2, "v1.13.1", "controlplane"), spec("w-1", 3, "v1.13.1")] });
    two = await startHarness({ nodes: [...controlPlanes(2, "v1.13.1")] });
  });
  after(async () => {
    await one?.stop();
    await two?.stop();
  });

  it("one member: it may go down (nothing can keep it up through its own reboot); forfeiting leadership is Talos' error", async () => {
    const health = await one.api.etcdHealth("10.5.0.2");
    assert.deepEqual(health.canTakeDown("cp-1"), { ok: true });
    const e = await rejectsWith(one.api.forfeitLeadership("10.5.0.2"), "UNKNOWN");
    assert.match(e.message, /failed to forfeit leadership: cannot forfeit leadership, only one member/);
  });

  it("two members: any reboot loses quorum — a permanent verdict naming the way out", async () => {
    const health = await two.api.etcdHealth("10.5.0.3");
    assert.equal(health.healthy, true);
    const v = health.canTakeDown("cp-1");
    assert.equal(v.ok, false);
    assert.equal(v.permanent, true);
    assert.match(v.reason!, /taking control plane cp-1 down would lose etcd quorum: 1 of 2 voting members would be left healthy, 2 are needed; a cluster with 2 control planes cannot keep quorum through any reboot — run 3/);
  });

  it("two members, one down: no leader — EtcdMemberList answers etcd's error, classified as etcd not healthy (retryable)", async () => {
    two.sim.node("cp-2").faults.neverComesBack = true;
    const down = new Promise<void>((r) => two.sim.once("down", () => r()));
    two.sim.node("cp-2").reboot();
    await down;
    try {
      const e = await rejectsWith(two.api.etcdHealth("10.5.0.2"), "ETCD_UNHEALTHY");
      assert.equal(e.retryable, true);
      assert.match(e.message, /etcd member list: etcdserver: no leader; etcd must be healthy/);
    } finally {
      two.sim.recover("cp-2");
    }
  });
});
