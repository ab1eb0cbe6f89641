#ifndef PS_MICROHTTPD_H
#define PS_MICROHTTPD_H
/* Wrappers for the variadic libmicrohttpd calls (MHD_start_daemon, MHD_get_daemon_info,
   MHD_set_connection_option). */
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_start_daemon with one fixed option list: bind address, thread pool size, connection limit,
   connection timeout (s), per-connection memory limit (bytes), the URI log callback (its result becomes the
   first *req_cls), the request-completed callback, and for HTTPS (flags with MHD_USE_TLS) the PEM key and
   certificate chain (MHD_OPTION_HTTPS_MEM_KEY and _CERT; both NULL for plain HTTP). */
struct MHD_Daemon *ps_mhd_start_daemon(unsigned int flags,
                                       const struct sockaddr *bind_address,
                                       unsigned int thread_pool_size,
                                       unsigned int connection_limit,
                                       unsigned int connection_timeout,
                                       size_t connection_memory_limit,
                                       MHD_AccessHandlerCallback handler,
                                       void *handler_cls,
                                       void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                       void *uri_log_cls,
                                       MHD_RequestCompletedCallback completed,
                                       void *completed_cls,
                                       const char *https_key_pem,
                                       const char *https_cert_pem);

/* MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port, or 0 when unknown. */
uint16_t ps_mhd_daemon_port(struct MHD_Daemon *daemon);

/* MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS)->num_connections, or 0 when unknown. */
unsigned int ps_mhd_daemon_connections(struct MHD_Daemon *daemon);

/* MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds); MHD_YES on success. */
enum MHD_Result ps_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds);
#endif
