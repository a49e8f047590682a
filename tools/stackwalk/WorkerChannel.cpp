#include "WorkerChannel.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace stackwalk {
namespace {

struct Header {
  uint32_t type;
  uint32_t length;
  uint64_t dump;
};

// A Done message's payload: the failure's kind (NoFailure when reported), its signal, its message.
constexpr uint32_t NoFailure = ~0u;
struct OutcomeHead {
  uint32_t kind;
  int32_t signal;
};

// Writes all of `size` bytes; a worker whose supervisor is gone has nothing left to do.
void writeAll(int socket, const void *data, size_t size) {
  auto *bytes = static_cast<const char *>(data);
  while (size) {
    ssize_t n = send(socket, bytes, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);
    bytes += n, size -= size_t(n);
  }
}

void sendMessage(int socket, WorkerMessage::Type type, uint64_t dump, const void *payload, uint32_t length) {
  Header header{uint32_t(type), length, dump};
  writeAll(socket, &header, sizeof header);
  writeAll(socket, payload, length);
}

void sendDone(int socket, uint64_t dump, OutcomeHead head, const char *message, size_t length) {
  char payload[sizeof head + 256];
  length = std::min(length, sizeof payload - sizeof head);
  std::memcpy(payload, &head, sizeof head);
  std::memcpy(payload + sizeof head, message, length);
  sendMessage(socket, WorkerMessage::Type::Done, dump, payload, uint32_t(sizeof head + length));
}

} // namespace

ChunkStream::Buffer::Buffer(int socket, uint64_t dump) : socket_(socket), dump_(dump) {
  setp(bytes_, bytes_ + sizeof bytes_);
}

int ChunkStream::Buffer::sync() {
  if (pptr() > pbase())
    sendMessage(socket_, WorkerMessage::Type::Chunk, dump_, pbase(), uint32_t(pptr() - pbase()));
  setp(bytes_, bytes_ + sizeof bytes_);
  return 0;
}

ChunkStream::Buffer::int_type ChunkStream::Buffer::overflow(int_type c) {
  sync();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

ChunkStream::ChunkStream(int socket, uint64_t dump) : std::ostream(&buffer_), buffer_(socket, dump) {}

ChunkStream::~ChunkStream() { buffer_.pubsync(); }

void sendOutcome(int socket, uint64_t dump, const std::optional<DumpFailure> &failure) {
  if (!failure) return sendDone(socket, dump, {NoFailure, 0}, "", 0);
  std::string message = failure->message.substr(0, 200);
  sendDone(socket, dump, {uint32_t(failure->kind), failure->signal}, message.data(), message.size());
}

void sendOutOfMemory(int socket, uint64_t dump) {
  static const char message[] = "the walk ran out of memory (an allocation failed)";
  sendDone(socket, dump, {uint32_t(DumpFailure::Kind::OutOfMemory), 0}, message, sizeof message - 1);
}

std::optional<DumpFailure> decodeOutcome(const std::string &payload) {
  OutcomeHead head{};
  std::memcpy(&head, payload.data(), std::min(payload.size(), sizeof head));
  if (head.kind == NoFailure) return std::nullopt;
  DumpFailure failure;
  failure.kind = DumpFailure::Kind(head.kind);
  failure.signal = head.signal;
  if (payload.size() > sizeof head) failure.message = payload.substr(sizeof head);
  return failure;
}

bool MessageReader::readFrom(int socket) {
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(socket, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending_.append(buffer, size_t(n));
    return true;
  }
}

std::optional<WorkerMessage> MessageReader::next() {
  Header header;
  if (pending_.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, pending_.data(), sizeof header);
  if (pending_.size() < sizeof header + header.length) return std::nullopt;
  WorkerMessage message{WorkerMessage::Type(header.type), header.dump, pending_.substr(sizeof header, header.length)};
  pending_.erase(0, sizeof header + header.length);
  return message;
}

bool sendDumpIndex(int socket, uint64_t dump) {
  return send(socket, &dump, sizeof dump, MSG_NOSIGNAL) == ssize_t(sizeof dump);
}

std::optional<uint64_t> receiveDumpIndex(int socket) {
  uint64_t dump;
  size_t got = 0;
  while (got < sizeof dump) {
    ssize_t n = read(socket, reinterpret_cast<char *>(&dump) + got, sizeof dump - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += size_t(n);
  }
  return dump;
}

} // namespace stackwalk
