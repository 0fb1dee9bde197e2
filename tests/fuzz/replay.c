/* SPDX-License-Identifier: MIT */
/*
 * Replays fuzz corpora without libFuzzer: every file named on the command
 * line, or every file in a named directory, goes through
 * LLVMFuzzerTestOneInput once. A crash or sanitizer report fails the test.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long size;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0, count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **names;
			int n = scandir(argv[i], &names, NULL, alphasort);
			for (int j = 0; j < n; j++) {
				char path[4096];
				if (names[j]->d_name[0] != '.') {
					snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
					failed += replay_file(path);
					count++;
				}
				free(names[j]);
			}
			free(names);
		} else {
			failed += replay_file(argv[i]);
			count++;
		}
	}
	printf("replayed %d input(s), %d unreadable\n", count, failed);
	return failed || count == 0 ? 1 : 0;
}
