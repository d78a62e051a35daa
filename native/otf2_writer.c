// luna-otf2: writes an OTF2 archive through the OTF2 library (the reference writer that Score-P
// uses and Vampir, Scalasca, Cube and otf2-print read) from the record stream that
// src/trace/export/otf2.ts prepares: the event sequence of each location in order (EVENTS), then
// the global definitions (DEFS; strings are written there while the events are prepared). It
// decides nothing: ids, names, order and counts all come from the two files.
//
//   luna-otf2 ARCHIVE_DIR ARCHIVE_NAME EVENTS DEFS
//
// Both little-endian records tagged by one byte (the cases of the switch below); EVENTS starts
// with "LUNAOTF2" u32 version, DEFS ends with '.'. On any error: one line on stderr naming the
// record and the cause, exit 1.
#include <otf2/otf2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_VERSION 1u
#define MAX_ATTRS 8

static uint64_t record_no = 0;
static FILE* in;

static void die(const char* what, const char* why) {
  fprintf(stderr, "luna-otf2: record %llu (%s): %s\n", (unsigned long long)record_no, what, why);
  exit(1);
}

static void check(OTF2_ErrorCode e, const char* what) {
  if (e != OTF2_SUCCESS) die(what, OTF2_Error_GetDescription(e));
}

static void rd(void* p, size_t n, const char* what) {
  if (n && fread(p, 1, n, in) != n) die(what, feof(in) ? "stream ends inside the record" : "read error");
}
static uint8_t u8(const char* w) { uint8_t v; rd(&v, 1, w); return v; }
static uint32_t u32(const char* w) { uint32_t v; rd(&v, 4, w); return v; }
static uint64_t u64(const char* w) { uint64_t v; rd(&v, 8, w); return v; }

// Attributes of an event: count, then (attribute id, OTF2 type, value as u64) each.
static OTF2_AttributeList* attrs(OTF2_AttributeList* list, const char* w) {
  uint8_t n = u8(w);
  if (n > MAX_ATTRS) die(w, "too many attributes");
  if (n == 0) return NULL;
  check(OTF2_AttributeList_RemoveAllAttributes(list), w);
  for (uint8_t i = 0; i < n; i++) {
    uint32_t id = u32(w);
    uint8_t type = u8(w);
    uint64_t v = u64(w);
    OTF2_AttributeValue av;
    switch (type) {
      case OTF2_TYPE_UINT64: av.uint64 = v; break;
      case OTF2_TYPE_INT64: av.int64 = (int64_t)v; break;
      case OTF2_TYPE_STRING: av.stringRef = (OTF2_StringRef)v; break;
      default: die(w, "unsupported attribute type");
    }
    check(OTF2_AttributeList_AddAttribute(list, id, type, av), w);
  }
  return list;
}

static OTF2_FlushType pre_flush(void* u, OTF2_FileType ft, OTF2_LocationRef l, void* c, bool final) {
  (void)u; (void)ft; (void)l; (void)c; (void)final;
  return OTF2_FLUSH;
}
// no post-flush callback: no BufferFlush records (they would add events the trace never had)
static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = NULL };

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: luna-otf2 ARCHIVE_DIR ARCHIVE_NAME EVENTS DEFS\n");
    return 2;
  }
  in = fopen(argv[3], "rb");
  if (!in) die("open", "cannot open the events file");
  char magic[8];
  rd(magic, 8, "header");
  if (memcmp(magic, "LUNAOTF2", 8) != 0) die("header", "not a luna OTF2 stream");
  if (u32("header") != STREAM_VERSION) die("header", "stream version differs from this helper's");

  OTF2_Archive* ar = OTF2_Archive_Open(argv[1], argv[2], OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar) die("open", "OTF2_Archive_Open failed (does the archive exist already, or is the directory not writable?)");
  check(OTF2_Archive_SetFlushCallbacks(ar, &flush_callbacks, NULL), "open");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "open");
  check(OTF2_Archive_SetCreator(ar, "luna-ts"), "open");
  check(OTF2_Archive_OpenEvtFiles(ar), "open event files");

  OTF2_AttributeList* list = OTF2_AttributeList_New();
  OTF2_EvtWriter* ev = NULL;
  OTF2_GlobalDefWriter* gd = NULL;
  uint64_t* locations = NULL; // locations seen, for their (empty) local definition files
  size_t nloc = 0, caploc = 0;
  char* str = NULL;
  size_t strcap = 0;

  for (;;) {
    record_no++;
    int tag = fgetc(in);
    if (tag == EOF && !gd && !ev) {
      // the events end; the definitions follow in the second file
      fclose(in);
      in = fopen(argv[4], "rb");
      if (!in) die("open", "cannot open the definitions file");
      tag = fgetc(in);
    }
    if (tag == EOF) die("record", "stream ends without its end record");
    if (tag == '.') break;
    bool is_event = strchr("BEXPQVZ", tag) != NULL;
    if (is_event && tag != 'B' && !ev) die("event", "event outside a location block");
    if (!is_event && !gd) {
      if (ev) die("definition", "definition inside a location block");
      check(OTF2_Archive_CloseEvtFiles(ar), "close event files");
      // empty local definition files: readers expect one per location
      check(OTF2_Archive_OpenDefFiles(ar), "open definition files");
      for (size_t i = 0; i < nloc; i++) {
        OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(ar, locations[i]);
        if (!dw) die("definition", "no local definition writer");
        check(OTF2_Archive_CloseDefWriter(ar, dw), "local definitions");
      }
      check(OTF2_Archive_CloseDefFiles(ar), "close definition files");
      gd = OTF2_Archive_GetGlobalDefWriter(ar);
      if (!gd) die("definition", "no global definition writer");
    }
    switch (tag) {
      case 'B': {
        if (ev) die("location", "location block not closed");
        uint64_t loc = u64("location");
        ev = OTF2_Archive_GetEvtWriter(ar, loc);
        if (!ev) die("location", "no event writer for the location");
        if (nloc == caploc) {
          caploc = caploc ? caploc * 2 : 64;
          locations = realloc(locations, caploc * sizeof *locations);
          if (!locations) die("location", "out of memory");
        }
        locations[nloc++] = loc;
        break;
      }
      case 'Z':
        check(OTF2_Archive_CloseEvtWriter(ar, ev), "close location");
        ev = NULL;
        break;
      case 'E': {
        uint64_t t = u64("enter");
        uint32_t region = u32("enter");
        check(OTF2_EvtWriter_Enter(ev, attrs(list, "enter"), t, region), "enter");
        break;
      }
      case 'X': {
        uint64_t t = u64("leave");
        uint32_t region = u32("leave");
        check(OTF2_EvtWriter_Leave(ev, attrs(list, "leave"), t, region), "leave");
        break;
      }
      case 'P': case 'Q': {
        const char* w = tag == 'P' ? "send" : "receive";
        uint64_t t = u64(w);
        uint32_t peer = u32(w), msgTag = u32(w);
        uint64_t len = u64(w);
        OTF2_AttributeList* a = attrs(list, w);
        if (tag == 'P') check(OTF2_EvtWriter_MpiSend(ev, a, t, peer, 0, msgTag, len), w);
        else check(OTF2_EvtWriter_MpiRecv(ev, a, t, peer, 0, msgTag, len), w);
        break;
      }
      case 'V': {
        uint64_t t = u64("metric");
        uint32_t metric = u32("metric");
        OTF2_Type type = OTF2_TYPE_INT64;
        OTF2_MetricValue v;
        v.signed_int = (int64_t)u64("metric");
        check(OTF2_EvtWriter_Metric(ev, NULL, t, metric, 1, &type, &v), "metric");
        break;
      }
      case 'S': {
        uint32_t id = u32("string"), len = u32("string");
        if (len + 1 > strcap) {
          strcap = len + 1 > 2 * strcap ? len + 1 : 2 * strcap;
          str = realloc(str, strcap);
          if (!str) die("string", "out of memory");
        }
        rd(str, len, "string");
        str[len] = 0;
        check(OTF2_GlobalDefWriter_WriteString(gd, id, str), "string");
        break;
      }
      case 'K': {
        uint64_t res = u64("clock"), off = u64("clock"), len = u64("clock"), real = u64("clock");
        check(OTF2_GlobalDefWriter_WriteClockProperties(gd, res, off, len, real), "clock properties");
        break;
      }
      case 'T': {
        uint32_t id = u32("system tree node"), name = u32("system tree node"), cls = u32("system tree node"), parent = u32("system tree node");
        check(OTF2_GlobalDefWriter_WriteSystemTreeNode(gd, id, name, cls, parent), "system tree node");
        break;
      }
      case 'G': {
        uint32_t id = u32("location group"), name = u32("location group"), stn = u32("location group");
        check(OTF2_GlobalDefWriter_WriteLocationGroup(gd, id, name, OTF2_LOCATION_GROUP_TYPE_PROCESS, stn, OTF2_UNDEFINED_LOCATION_GROUP), "location group");
        break;
      }
      case 'L': {
        uint64_t id = u64("location");
        uint32_t name = u32("location"), group = u32("location");
        uint64_t n = u64("location");
        check(OTF2_GlobalDefWriter_WriteLocation(gd, id, name, OTF2_LOCATION_TYPE_CPU_THREAD, n, group), "location");
        break;
      }
      case 'R': {
        uint32_t id = u32("region"), name = u32("region"), desc = u32("region");
        uint8_t role = u8("region"), paradigm = u8("region");
        check(OTF2_GlobalDefWriter_WriteRegion(gd, id, name, name, desc, role, paradigm, OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0), "region");
        break;
      }
      case 'A': {
        uint32_t id = u32("attribute"), name = u32("attribute"), desc = u32("attribute");
        uint8_t type = u8("attribute");
        check(OTF2_GlobalDefWriter_WriteAttribute(gd, id, name, desc, type), "attribute");
        break;
      }
      case 'C': {
        // the one communicator of the transfers: rank r is the location members[r]
        uint32_t name = u32("communicator"), n = u32("communicator");
        uint64_t* members = malloc((n ? n : 1) * sizeof *members);
        uint64_t* ranks = malloc((n ? n : 1) * sizeof *ranks);
        if (!members || !ranks) die("communicator", "out of memory");
        for (uint32_t i = 0; i < n; i++) { members[i] = u64("communicator"); ranks[i] = i; }
        check(OTF2_GlobalDefWriter_WriteGroup(gd, 0, OTF2_UNDEFINED_STRING, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members), "communicator locations");
        check(OTF2_GlobalDefWriter_WriteGroup(gd, 1, OTF2_UNDEFINED_STRING, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, ranks), "communicator group");
        check(OTF2_GlobalDefWriter_WriteComm(gd, 0, name, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "communicator");
        free(members);
        free(ranks);
        break;
      }
      case 'M': {
        uint32_t id = u32("metric"), name = u32("metric"), desc = u32("metric"), unit = u32("metric");
        check(OTF2_GlobalDefWriter_WriteMetricMember(gd, id, name, desc, OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, unit), "metric member");
        OTF2_MetricMemberRef member = id;
        check(OTF2_GlobalDefWriter_WriteMetricClass(gd, id, 1, &member, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT), "metric class");
        break;
      }
      default: {
        char why[64];
        snprintf(why, sizeof why, "unknown record tag 0x%02x", tag);
        die("record", why);
      }
    }
  }
  if (ev) die("end", "location block not closed");
  if (!gd) die("end", "no definitions");
  OTF2_AttributeList_Delete(list);
  check(OTF2_Archive_Close(ar), "close archive");
  free(locations);
  free(str);
  return 0;
}
