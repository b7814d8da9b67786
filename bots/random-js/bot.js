// A random bot for mancala-arena (protocol v1), Node.js without npm packages.
// Reads one JSON object per line on stdin, writes one per line on stdout.
// stderr is free for logs. Use it as a template: replace `choose`.
"use strict";
const readline = require("readline");

// This game's random numbers in [0, 1): Math.random until a game_start
// brings a seed (then mulberry32, seeded from it and the seat, so that the
// same seed gives the same game again).
let random = Math.random;

function seeded(seed, seat) {
  let s;
  try {
    s = BigInt.asUintN(64, BigInt(seed) ^ (BigInt(seat + 1) * 0x9e3779b97f4a7c15n));
  } catch (e) {
    return Math.random;
  }
  let a = Number(s & 0xffffffffn) ^ Number(s >> 32n);
  return function () {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function choose(request) {
  // Pick one of the legal options; request.state holds the full state.
  return request.legal[Math.floor(random() * request.legal.length)];
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch (e) {
    return;
  }
  if (message.type === "hello") {
    send({ type: "hello", name: "random-js", version: "1.0", author: "mancala-arena" });
  } else if (message.type === "game_start") {
    if (typeof message.seed === "string") random = seeded(message.seed, message.seat || 0);
  } else if (message.type === "request") {
    send({ type: "reply", option: choose(message) });
  } else if (message.type === "quit") {
    process.exit(0);
  }
  // game_end and unknown types: nothing to answer.
});
input.on("close", () => process.exit(0));
