// A random bot for mancala-arena (protocol v1), Node.js without npm packages.
// Reads one JSON object per line on stdin, writes one per line on stdout.
// stderr is free for logs. Use it as a template: replace `choose`.
"use strict";
const readline = require("readline");

function choose(request) {
  // Pick one of the legal options; request.state holds the full state.
  return request.legal[Math.floor(Math.random() * request.legal.length)];
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
  } else if (message.type === "request") {
    send({ type: "reply", option: choose(message) });
  } else if (message.type === "quit") {
    process.exit(0);
  }
  // game_start, game_end and unknown types: nothing to answer.
});
input.on("close", () => process.exit(0));
