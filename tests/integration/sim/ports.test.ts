// The sim's ports: chosen outside the kernel's ephemeral range and reserved across processes, so the two halves of the
// test run (or two sims) starting servers at once never pick the same port.
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { freePort, PORT_LOCKS, reservePort } from "../../../sim/ports";

describe("integration: sim ports", function () {
  this.timeout(60000);

  it("processes choosing ports at once never get the same one, and none is in the ephemeral range", async () => {
    // Each process prints its ports, then lives on (holding them, as a test half does) until its stdin closes.
    const script = `const { freePort } = require(${JSON.stringify(path.join(__dirname, "../../../sim/ports"))});
      (async () => { const ps = []; for (let i = 0; i < 40; i++) ps.push(await freePort()); process.stdout.write(JSON.stringify(ps) + "\\n"); })();
      process.stdin.resume(); process.stdin.on("end", () => process.exit(0));`;
    const children = Array.from({ length: 4 }, () => spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] }));
    try {
      const chosen = await Promise.all(children.map((child) => new Promise<number[]>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (d) => {
          out += d;
          if (out.endsWith("\n")) resolve(JSON.parse(out) as number[]);
        });
        child.once("exit", (code) => reject(new Error(`a port chooser exited (${code}) before it printed its ports`)));
      })));
      const ports = chosen.flat();
      assert.equal(ports.length, 160);
      assert.equal(new Set(ports).size, ports.length, "a port was given twice");
      const [lo, hi] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
      assert.ok(ports.every((p) => p < lo! || p > hi!), "a port from the kernel's ephemeral range");
    } finally {
      for (const child of children) child.stdin!.end();
    }
  });

  it("a port reserved by a live process is not given again; a dead process's reservation is taken over", async () => {
    const port = await freePort();
    assert.equal(fs.readFileSync(path.join(PORT_LOCKS, String(port)), "utf8"), String(process.pid));
    assert.equal(reservePort(port), false, "this process's own port again");

    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      fs.writeFileSync(path.join(PORT_LOCKS, String(port)), String(other.pid));
      assert.equal(reservePort(port), false, "a live process's port");
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
    assert.equal(reservePort(port), true, "the reservation of a process that is gone");
    assert.equal(fs.readFileSync(path.join(PORT_LOCKS, String(port)), "utf8"), String(process.pid));
  });
});
