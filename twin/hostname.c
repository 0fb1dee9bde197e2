/* SPDX-License-Identifier: MIT */
/* Host name validation and canonical form (see hostname.h). */
#include "hostname.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

int tbx_hostname_ip_family(const char *host)
{
	unsigned char addr[16];

	if (inet_pton(AF_INET, host, addr) == 1)
		return 4;
	if (inet_pton(AF_INET6, host, addr) == 1)
		return 6;
	return 0;
}

int tbx_hostname_canon(char *host)
{
	size_t len = strlen(host), label = 0;

	if (len && host[len - 1] == '.')
		host[--len] = '\0';
	if (len == 0 || len > 253)
		return -1;
	if (tbx_hostname_ip_family(host))
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		if (c == '.') {
			if (label == 0 || host[i - 1] == '-')
				return -1;
			label = 0;
			continue;
		}
		if (!isalnum(c) && c != '-' && c != '_')
			return -1;
		if (c == '-' && label == 0)
			return -1;
		if (++label > 63)
			return -1;
		host[i] = (char)tolower(c);
	}
	return host[len - 1] == '-' ? -1 : 0;
}
