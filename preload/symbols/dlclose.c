/* SPDX-License-Identifier: MIT */
/*
 * dlclose: a library unloaded before the process ends is missing from the
 * final `maps` record, yet the cumulative aggregates keep the call sites
 * in it. So a batch with the mappings is written first, while the library
 * is still mapped; kanalyze keeps the mappings an older record has and a
 * newer one no longer lists (model.c). Counts nothing itself.
 */
#include "symbols.h"
#include "real.h"

KP_EXPORT int dlclose(void *handle)
{
	if (unlikely(!kp_real.dlclose)) {
		kp_ensure_init();
		if (!kp_real.dlclose)
			return -1; /* no libdl to call: dlerror() says nothing new */
	}
	if (handle && kp_state == KP_ACTIVE)
		kp_flush(KP_FLUSH_MAPS, NULL);
	return kp_real.dlclose(handle);
}
