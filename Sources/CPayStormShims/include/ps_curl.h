#ifndef PS_CURL_H
#define PS_CURL_H
#include <curl/curl.h>
/* The load engine drives libcurl from its own epoll loop and paces sends with a timerfd;
   Glibc's Swift module exposes neither header. */
#include <sys/epoll.h>
#include <sys/timerfd.h>

CURLcode ps_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ps_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ps_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ps_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ps_curl_easy_setopt_write_function(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode ps_curl_easy_setopt_header_function(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode ps_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ps_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value);
CURLcode ps_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ps_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);
CURLMcode ps_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLcode ps_curl_easy_setopt_prereq_function(CURL *handle, int (*callback)(void *, char *, char *, int, int));
CURLcode ps_curl_easy_setopt_sockopt_function(CURL *handle, int (*callback)(void *, curl_socket_t, curlsocktype));
CURLcode ps_curl_easy_setopt_closesocket_function(CURL *handle, int (*callback)(void *, curl_socket_t));
CURLcode ps_curl_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value);
CURLMcode ps_curl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode ps_curl_multi_setopt_socket_function(CURLM *multi, int (*callback)(CURL *, curl_socket_t, int, void *, void *));
CURLMcode ps_curl_multi_setopt_timer_function(CURLM *multi, int (*callback)(CURLM *, long, void *));
#endif
