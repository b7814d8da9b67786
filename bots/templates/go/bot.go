// A random bot for mancala-arena (protocol v1) in Go, standard library only.
// One JSON object per line on stdin; one per line on stdout, flushed.
// Replace choose().
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
)

// The fields this bot reads; the rest of each message is ignored.
type message struct {
	Type  string   `json:"type"`
	Legal []string `json:"legal"`
	Seed  string   `json:"seed"`
	Seat  uint64   `json:"seat"`
}

// Picks one legal option: replace this with your bot.
func choose(m message, rng *rand.Rand) string {
	return m.Legal[rng.Intn(len(m.Legal))]
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	rng := rand.New(rand.NewSource(1))
	for {
		line, err := in.ReadString('\n') // any length
		if len(line) > 0 {
			var m message
			if json.Unmarshal([]byte(line), &m) == nil {
				switch m.Type {
				case "hello":
					fmt.Fprintln(out, `{"type":"hello","name":"template-go","version":"1.0"}`)
				case "game_start":
					// Seed from the referee's seed: the same seed, the same game.
					if s, e := strconv.ParseUint(m.Seed, 10, 64); e == nil {
						rng = rand.New(rand.NewSource(int64(s ^ (m.Seat * 0x9e3779b97f4a7c15))))
					}
				case "request":
					reply, _ := json.Marshal(map[string]string{"type": "reply", "option": choose(m, rng)})
					out.Write(append(reply, '\n'))
				case "quit":
					out.Flush()
					return
				}
				out.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
