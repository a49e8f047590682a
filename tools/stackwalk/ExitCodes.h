// stackwalk's exit codes: 0 a report was produced (warnings allowed); 1 in a
// batch, some dumps have no report; 2 usage error; 3 the dump has no report.
#pragma once

namespace stackwalk {

constexpr int ExitOk = 0, ExitSomeFailed = 1, ExitUsage = 2, ExitUnreadable = 3;

} // namespace stackwalk
