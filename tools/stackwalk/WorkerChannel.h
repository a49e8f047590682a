// What a worker process tells its supervisor over their socket: a dump's
// report in chunks as it is printed, then how the dump ended. The supervisor
// sends the index of each dump to walk as 8 bytes.
#pragma once

#include "DumpFailure.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

namespace stackwalk {

struct WorkerMessage {
  enum class Type : uint32_t { Chunk = 1, Done = 2 };
  Type type;
  uint64_t dump;
  std::string payload; // Chunk: report bytes; Done: an encoded outcome (decodeOutcome)
};

// Worker side: a stream whose bytes go to the supervisor as Chunk messages of `dump`.
class ChunkStream : public std::ostream {
public:
  ChunkStream(int socket, uint64_t dump);
  ~ChunkStream() override;

private:
  class Buffer : public std::streambuf {
  public:
    Buffer(int socket, uint64_t dump);
    int sync() override;
    int_type overflow(int_type c) override;

  private:
    int socket_;
    uint64_t dump_;
    char bytes_[1 << 16];
  };
  Buffer buffer_;
};

// Worker side: the dump is done, reported (no failure) or not.
void sendOutcome(int socket, uint64_t dump, const std::optional<DumpFailure> &failure);
// Worker side, when memory ran out: allocates nothing.
void sendOutOfMemory(int socket, uint64_t dump);

// Supervisor side: the outcome a Done message carries.
std::optional<DumpFailure> decodeOutcome(const std::string &payload);

// Supervisor side: messages reassembled from what a worker's socket delivers.
class MessageReader {
public:
  // Reads what is available; false at the end of the stream (the worker is gone).
  bool readFrom(int socket);
  std::optional<WorkerMessage> next();

private:
  std::string pending_;
};

// Supervisor side: asks a worker to walk a dump; false when the worker is gone.
bool sendDumpIndex(int socket, uint64_t dump);
// Worker side: the next dump to walk; nullopt when the supervisor has no more.
std::optional<uint64_t> receiveDumpIndex(int socket);

} // namespace stackwalk
