import * as assert from "node:assert/strict";
import { afterFailedLook, lookMeaning, waitTimeoutError, type WaitFacts } from "../../../provider/talos/look";

// What the wait for a rebooting node makes of each look (talos/look.ts); the sim proves the reads, this the meaning.
describe("talos: what the last look at a rebooting node means", () => {
  const w: WaitFacts = { node: "10.5.0.7", target: "v1.13.2", staged: false, lockedOut: false };

  it("same boot id: still waiting; the target booted: back; another version: rolled back, or another run's upgrade when locked out", () => {
    assert.deepEqual(lookMeaning(w, { booted: false }), { outcome: "waiting", last: { seen: "same-boot" } });
    assert.deepEqual(lookMeaning(w, { booted: true, version: "v1.13.2" }), { outcome: "back" });
    const rolled = lookMeaning(w, { booted: true, version: "v1.12.3" });
    assert.ok(rolled.outcome === "failed");
    assert.equal(rolled.error.code, "ROLLED_BACK");
    assert.match(rolled.error.message, /node 10\.5\.0\.7 came back on v1\.12\.3 instead of v1\.13\.2: the upgrade was rolled back/);
    const landed = lookMeaning({ ...w, lockedOut: true }, { booted: true, version: "v1.13.1" });
    assert.ok(landed.outcome === "failed");
    assert.equal(landed.error.code, "LOCKED");
    assert.match(landed.error.message, /another upgrade was running on the node .* came back on v1\.13\.1, not v1\.13\.2/);
  });

  it("a staged upgrade on another version after a reboot is on its way (it boots once more), and at the timeout a rollback", () => {
    const staged = { ...w, staged: true };
    const m = lookMeaning(staged, { booted: true, version: "v1.9.2" });
    assert.deepEqual(m, { outcome: "waiting", last: { seen: "other-version", version: "v1.9.2" } });
    const e = waitTimeoutError(staged, { seen: "other-version", version: "v1.9.2" }, undefined, 60_000);
    assert.equal(e.code, "TIMEOUT");
    assert.match(e.message, /came back on v1\.9\.2 instead of v1\.13\.2: the upgrade was rolled back/);
  });

  it("the timeout says what was last seen; a lost answer with the node never rebooted says the request may not have arrived", () => {
    assert.match(waitTimeoutError(w, { seen: "nothing" }, undefined, 8000).message, /did not come back on v1\.13\.2 within 8s \(no answer yet\)/);
    assert.match(waitTimeoutError(w, { seen: "down", detail: "no route" }, undefined, 8000).message, /\(last seen: unreachable: no route\)/);
    const lost = { action: "Reboot", detail: "error reading from server: EOF" };
    assert.match(waitTimeoutError(w, { seen: "same-boot" }, lost, 8000).message,
      /the answer to Reboot was lost \(error reading from server: EOF\) and the node did not reboot within 8s \(last seen: up with the same boot id/);
    // the node went down after the lost answer: it did act, so the words are the plain timeout's
    assert.match(waitTimeoutError(w, { seen: "down", detail: "no route" }, lost, 8000).message, /did not come back on v1\.13\.2 within 8s/);
  });

  it("looks that get no answer in time after the node was seen on its old boot keep the lost answer named; a refused look is down", () => {
    const lost = { action: "Reboot", detail: "error reading from server: EOF" };
    const slow = "read /proc/sys/kernel/random/boot_id: no answer in time";
    let last = afterFailedLook({ seen: "same-boot" }, slow, true);
    last = afterFailedLook(last, slow, true);
    assert.deepEqual(last, { seen: "same-boot", unansweredSince: slow });
    assert.match(waitTimeoutError(w, last, lost, 8000).message,
      /the answer to Reboot was lost \(error reading from server: EOF\) and the node did not reboot within 8s \(last seen: up with the same boot id; the looks after it got no answer in time: read \/proc/);
    // without a lost answer the node may be on its way down: the words do not claim it has not rebooted
    const plain = waitTimeoutError(w, last, undefined, 8000).message;
    assert.match(plain, /did not come back on v1\.13\.2 within 8s \(last seen: up with the same boot id; the looks after it got no answer in time/);
    assert.doesNotMatch(plain, /it has not rebooted/);
    // a refused connection is the node going down: it acted, so the plain timeout's words
    const down = afterFailedLook(last, "connect ECONNREFUSED", false);
    assert.deepEqual(down, { seen: "down", detail: "connect ECONNREFUSED" });
    assert.match(waitTimeoutError(w, down, lost, 8000).message, /did not come back on v1\.13\.2 within 8s \(last seen: unreachable: connect ECONNREFUSED\)/);
    // no answer before the node was ever seen: unreachable, as before
    assert.deepEqual(afterFailedLook({ seen: "nothing" }, slow, true), { seen: "down", detail: slow });
  });
});
