/** Webhook signing (the Standard Webhooks reference vector) and the address policy (lib/webhooks). */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { createAddressPolicy } from "../../lib/webhooks/address.ts";
import { messageId, newSecret, sign } from "../../lib/webhooks/deliver.ts";

describe("webhook signatures", () => {
  it("match the Standard Webhooks reference vector", () => {
    // From the specification's reference libraries (standard-webhooks, tests of `Webhook.sign`).
    expect(
      sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("makes 32-byte secrets and one stable message id per batch", () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_/);
    expect(Buffer.from(a.slice(6), "base64").length).toBe(32);
    expect(newSecret()).not.toBe(a);
    const id = "2f1c2a4e-0000-4000-8000-000000000001";
    expect(messageId(id, "1752573600000-00-0000000001-00000-0000")).toBe(
      messageId(id, "1752573600000-00-0000000001-00000-0000"),
    );
    expect(messageId(id, "1752573600000-00-0000000001-00000-0000")).not.toBe(
      messageId(id, "1752573600000-00-0000000001-00000-0001"),
    );
  });
});

describe("webhook address policy", () => {
  const strict = createAddressPolicy([]);
  it("refuses loopback, private, link-local, unspecified, multicast and reserved addresses", () => {
    for (const [address, kind] of [
      ["127.0.0.1", "loopback"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.31.255.255", "private"],
      ["192.168.0.1", "private"],
      ["100.64.0.1", "private (shared address space)"],
      ["fd12::1", "private (unique local)"],
      ["169.254.169.254", "link-local"],
      ["fe80::1", "link-local"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.251", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "reserved"],
    ] as const)
      expect(strict.refusal(address), address).toBe(kind);
    for (const address of ["8.8.8.8", "172.32.0.1", "2001:4860:4860::8888", "100.128.0.1"])
      expect(strict.refusal(address), address).toBeNull();
  });

  it("allows what an operator lists, and only that", () => {
    const allowed = createAddressPolicy(
      loadConfig({ WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8, fd00::/8" }).WEBHOOK_ALLOWED_CIDRS,
    );
    expect(allowed.refusal("127.0.0.1")).toBeNull();
    expect(allowed.refusal("::ffff:127.0.0.2")).toBeNull();
    expect(allowed.refusal("fd00::5")).toBeNull();
    expect(allowed.refusal("::1")).toBe("loopback");
    expect(allowed.refusal("10.0.0.1")).toBe("private");
  });

  it("refuses other schemes and resolves IP literals without DNS", async () => {
    await expect(strict.resolve("ftp://8.8.8.8/")).rejects.toThrow(/^url must be an http/);
    await expect(strict.resolve("http://[::1]:8080/")).rejects.toThrow(/::1, a loopback address/);
    const ok = await strict.resolve("https://8.8.8.8/hook");
    expect(ok.addresses).toEqual([{ address: "8.8.8.8", family: 4 }]);
  });
});
