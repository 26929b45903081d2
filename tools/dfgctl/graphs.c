// SPDX-License-Identifier: GPL-2.0
/* dfgctl graphs: the live graphs, one row each. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "dfgctl.h"
#include "json.h"

static const char *const graph_attrs[] = {
	"name", "uid", "gid", "mode", "objects", "pages", "attached",
};

int cmd_graphs(int argc, char **argv)
{
	char gdir[PATH_MAX], path[PATH_MAX], owner[260];
	char v[ARRAY_SIZE(graph_attrs)][128];
	struct dirent **ents;
	bool json;
	struct json js;
	int i, j, n, ret;

	ret = ctl_json_opts(argc, argv, "graphs", &json);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!ctl_path_join(gdir, sizeof(gdir), ctl_sysfs_dir(), "graphs"))
		return ctl_fail(ctl_sysfs_dir(), strerror(ENAMETOOLONG), false);
	n = ctl_scan_numbered(gdir, "", &ents);
	if (n < 0)
		return ctl_fail(gdir, strerror(-n), n == -ENOENT);
	json_init(&js, stdout);
	if (json)
		json_arr_begin(&js, NULL);
	else
		printf("%-6s %-24s %-11s %-5s %7s %9s %8s\n", "ID", "NAME",
		       "OWNER", "MODE", "OBJECTS", "PAGES", "ATTACHED");
	for (i = 0; i < n; i++) {
		ctl_path_join(path, sizeof(path), gdir, ents[i]->d_name);
		for (j = 0; j < (int)ARRAY_SIZE(graph_attrs); j++)
			if (ctl_read_sysfs_line(path, graph_attrs[j], v[j],
						sizeof(v[j])))
				strcpy(v[j], "?");	/* died meanwhile */
		if (json) {
			/* {"id":1,"name":"g","uid":0,...}, "?" kept as such */
			json_obj_begin(&js, NULL);
			json_auto(&js, "id", ents[i]->d_name);
			for (j = 0; j < (int)ARRAY_SIZE(graph_attrs); j++)
				if (j)
					json_auto(&js, graph_attrs[j], v[j]);
				else
					json_str(&js, "name", v[j]);
			json_obj_end(&js);
			continue;
		}
		if (snprintf(owner, sizeof(owner), "%s:%s", v[1], v[2]) < 0)
			owner[0] = '\0';
		printf("%-6s %-24s %-11s %-5s %7s %9s %8s\n",
		       ents[i]->d_name, v[0], owner, v[3], v[4], v[5], v[6]);
	}
	ctl_free_ents(ents, n);
	if (json) {
		json_arr_end(&js);
		json_finish(&js);
	}
	return EXIT_OK;
}
