// A random bot for mancala-arena (protocol v1) in C++17, standard library
// only. One JSON object per line on stdin; one per line on stdout, flushed.
// A real bot should use a JSON parser (nlohmann/json): this template only
// scans for the fields it needs (the option strings have no escapes).
#include <iostream>
#include <random>
#include <string>
#include <vector>

// The string value of "key" in line ("" if absent).
static std::string field(const std::string& line, const std::string& key) {
    auto p = line.find("\"" + key + "\"");
    if (p == std::string::npos) return "";
    p += key.size() + 2;
    while (p < line.size() && (line[p] == ' ' || line[p] == ':')) p++;
    if (p >= line.size() || line[p] != '"') return "";
    auto e = line.find('"', p + 1);
    return e == std::string::npos ? "" : line.substr(p + 1, e - p - 1);
}

// The strings of the "legal" array.
static std::vector<std::string> legal(const std::string& line) {
    std::vector<std::string> out;
    auto p = line.find("\"legal\"");
    if (p == std::string::npos) return out;
    p = line.find('[', p);
    while (p != std::string::npos && p < line.size() && line[p] != ']') {
        auto q = line.find('"', p);
        auto close = line.find(']', p);
        if (q == std::string::npos || q > close) break;
        auto e = line.find('"', q + 1);
        if (e == std::string::npos) break;
        out.push_back(line.substr(q + 1, e - q - 1));
        p = e + 1;
    }
    return out;
}

// Picks one legal option: replace this with your bot.
static std::string choose(const std::vector<std::string>& options, std::mt19937_64& rng) {
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

int main() {
    std::ios::sync_with_stdio(false);
    std::mt19937_64 rng(std::random_device{}());
    std::string line;
    while (std::getline(std::cin, line)) {
        std::string type = field(line, "type");
        if (type == "hello") {
            std::cout << "{\"type\":\"hello\",\"name\":\"template-cpp\",\"version\":\"1.0\"}\n" << std::flush;
        } else if (type == "game_start") {
            // Seed from the referee's seed: the same seed, the same game.
            std::string seed = field(line, "seed");
            auto s = line.find("\"seat\"");
            unsigned long long seat = s == std::string::npos ? 0 : std::stoull(line.substr(s + 7));
            if (!seed.empty()) rng.seed(std::stoull(seed) ^ (seat * 0x9e3779b97f4a7c15ULL));
        } else if (type == "request") {
            auto options = legal(line);
            if (options.empty()) continue;
            std::cout << "{\"type\":\"reply\",\"option\":\"" << choose(options, rng) << "\"}\n" << std::flush;
        } else if (type == "quit") {
            return 0;
        }
        // game_end and unknown types: nothing to answer.
    }
    return 0;
}
