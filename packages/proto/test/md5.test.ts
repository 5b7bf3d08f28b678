import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { md5FromStored, md5PasswordHash, md5StoredPassword, verifyMd5Password } from "../src/index.js";

const salt = Buffer.from([1, 2, 3, 4]);
const md5 = (data: Buffer | string) => createHash("md5").update(data).digest("hex");

describe("MD5 password authentication", () => {
  it("stores md5(password + user) with an md5 prefix", () => {
    expect(md5StoredPassword("md5_user", "password")).toBe("md57cd2b9a92689eab2e58caf2da80afa15");
  });

  it("answers the salt with md5(hex(md5(password + user)) + salt)", () => {
    const inner = md5("passwordmd5_user");
    const expected = `md5${md5(Buffer.concat([Buffer.from(inner), salt]))}`;
    expect(md5PasswordHash("md5_user", "password", salt)).toBe(expected);
    expect(expected).toBe("md580a32c6f038b79de232354a2ee7060eb");
  });

  it("lets a server that holds only the stored hash compute and check the answer", () => {
    const stored = md5StoredPassword("alice", "s3cret");
    expect(md5FromStored(stored, salt)).toBe(md5PasswordHash("alice", "s3cret", salt));
    expect(verifyMd5Password(stored, salt, md5PasswordHash("alice", "s3cret", salt))).toBe(true);
  });

  it("rejects a wrong password, another salt, another user and a stored value that is not MD5", () => {
    const stored = md5StoredPassword("alice", "s3cret");
    expect(verifyMd5Password(stored, salt, md5PasswordHash("alice", "nope", salt))).toBe(false);
    expect(
      verifyMd5Password(stored, Buffer.from([4, 3, 2, 1]), md5PasswordHash("alice", "s3cret", salt)),
    ).toBe(false);
    expect(verifyMd5Password(stored, salt, md5PasswordHash("bob", "s3cret", salt))).toBe(false);
    expect(verifyMd5Password("SCRAM-SHA-256$4096:x$y:z", salt, "md5")).toBe(false);
    expect(verifyMd5Password(stored, salt, "")).toBe(false);
  });
});
