// One dump's finished (or growing) report, held until its turn to print: in
// memory while small, in an unlinked temporary file beyond that, so a batch
// waiting on a slow dump does not hold the others' reports in memory.
#pragma once

#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace stackwalk {

class ReportSpool {
public:
  ReportSpool() = default;
  ReportSpool(ReportSpool &&other) noexcept;
  ReportSpool &operator=(ReportSpool &&other) noexcept;
  ~ReportSpool();

  void append(std::string_view bytes);
  // Writes everything appended, in order.
  void writeTo(std::ostream &out);

private:
  // Passes the file's bytes to `consume` and closes it.
  void readFile(const std::function<void(std::string_view)> &consume);

  static constexpr size_t InMemoryBytes = size_t(4) << 20;

  std::string memory_;
  std::FILE *file_ = nullptr; // after the first InMemoryBytes
};

} // namespace stackwalk
