// The system zlib, called directly by courier-bench as the baseline of the compression scenario.
#include <zlib.h>
