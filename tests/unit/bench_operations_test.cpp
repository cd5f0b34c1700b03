// rdma-bench's operation table (bench/include/rdmalab/bench/operations.hpp): every row against
// what the verbs say of its operation, the names, the rules the rows drive, and the sources: no
// file but the table's header branches on the operation, so an operation added is one row there.
#include "rdmalab/bench/config.hpp"
#include "rdmalab/bench/knobs.hpp"
#include "rdmalab/bench/operations.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace rdmalab::bench {
namespace {

// The verbs' own facts about an opcode, written here from the specification rather than read
// from the table, so a row that disagrees with them fails.
struct OperationsVerbsFacts {
    ibv_wc_opcode initiator_completion;
    unsigned target_access;  // what the responder checks against the target's MR and QP
    bool atomic;             // 8 bytes, the original value returned
    bool immediate;          // *_WITH_IMM
    bool consumes_receive;   // SEND and RDMA WRITE WITH IMM take a receive WR at the target
};

OperationsVerbsFacts operations_verbs_facts(ibv_wr_opcode opcode) {
    switch (opcode) {
        case IBV_WR_RDMA_WRITE:
            return {IBV_WC_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, false, false, false};
        case IBV_WR_RDMA_WRITE_WITH_IMM:
            return {IBV_WC_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, false, true, true};
        case IBV_WR_SEND:
            return {IBV_WC_SEND, 0, false, false, true};
        case IBV_WR_SEND_WITH_IMM:
            return {IBV_WC_SEND, 0, false, true, true};
        case IBV_WR_RDMA_READ:
            return {IBV_WC_RDMA_READ, IBV_ACCESS_REMOTE_READ, false, false, false};
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
            return {IBV_WC_FETCH_ADD, IBV_ACCESS_REMOTE_ATOMIC, true, false, false};
        case IBV_WR_ATOMIC_CMP_AND_SWP:
            return {IBV_WC_COMP_SWAP, IBV_ACCESS_REMOTE_ATOMIC, true, false, false};
        default:
            ADD_FAILURE() << "opcode " << opcode << " has no facts here: add them";
            return {};
    }
}

TEST(BenchOperations, EveryRowAgreesWithTheVerbs) {
    for (const Operation& row : kOperations) {
        SCOPED_TRACE(row.name);
        const OperationsVerbsFacts facts = operations_verbs_facts(row.opcode);
        EXPECT_EQ(row.initiator_completion, facts.initiator_completion);
        EXPECT_EQ(row.extended_flag, std::uint64_t{1} << row.opcode);  // IBV_QP_EX_WITH_<opcode>
        EXPECT_NE(row.extended_call, nullptr);
        EXPECT_EQ(row.target_access, facts.target_access);
        // Only READ leaves the target's memory as it was; READ and atomics bring data back.
        const bool reads_remote = facts.target_access == IBV_ACCESS_REMOTE_READ;
        EXPECT_EQ(row.lands_at_target, !reads_remote);
        EXPECT_EQ(row.lands_at_initiator, reads_remote || facts.atomic);
        EXPECT_EQ(row.atomic, facts.atomic);
        EXPECT_EQ(row.carries_immediate, facts.immediate);
        // The target posts receives exactly where the operation consumes one; a write with
        // immediate completes as RECV_RDMA_WITH_IMM and leaves its data where it was written.
        EXPECT_EQ(row.target_receives(), facts.consumes_receive);
        if (facts.consumes_receive) {
            EXPECT_EQ(row.target_completion, row.opcode == IBV_WR_RDMA_WRITE_WITH_IMM
                                                 ? IBV_WC_RECV_RDMA_WITH_IMM
                                                 : IBV_WC_RECV);
        }
        // Atomics move one 8-byte value; nothing else has a fixed size.
        EXPECT_EQ(row.fixed_size, facts.atomic ? kAtomicBytes : 0u);
        // Inline data is the initiator's payload: not for what READ or an atomic brings back.
        EXPECT_EQ(row.can_inline, !row.lands_at_initiator);
        // UC has no responder (no READ, no atomics); UD datagrams carry no rkey (send only).
        EXPECT_EQ(row.runs_over_uc, !row.lands_at_initiator);
        EXPECT_EQ(row.runs_over_ud, row.target_access == 0);
        // A ping-pong ends on the initiator's own completion where the reply is data it fetched,
        // on a receive where the target must post them, else on the stamp the target writes.
        EXPECT_EQ(row.reply, row.lands_at_initiator  ? Reply::kCompletion
                             : row.target_receives() ? Reply::kReceive
                                                     : Reply::kStamp);
        // Each check looks where the operation put its data.
        switch (row.verify) {
            case Verify::kTargetPattern:
                EXPECT_TRUE(row.lands_at_target && !row.atomic);
                break;
            case Verify::kInitiatorPattern:
                EXPECT_TRUE(reads_remote);
                break;
            case Verify::kTargetCounter:
                EXPECT_TRUE(row.atomic && row.atomic_compare_add > 0);
                break;
            case Verify::kNothing:
                break;
        }
        if (!row.atomic) {
            EXPECT_EQ(row.atomic_compare_add, 0u);
        }
    }
}

TEST(BenchOperations, TheNamedFactsOfEachOperation) {
    const Operation& read = operation(Op::kRead);
    EXPECT_EQ(read.target_access, unsigned{IBV_ACCESS_REMOTE_READ});
    EXPECT_TRUE(read.lands_at_initiator);
    EXPECT_FALSE(read.lands_at_target);  // its target registers without LOCAL_WRITE
    EXPECT_EQ(read.verify, Verify::kInitiatorPattern);

    const Operation& send = operation(Op::kSend);
    EXPECT_EQ(send.target_completion, IBV_WC_RECV);  // a receive posted at the target
    EXPECT_TRUE(send.data_in_receive());
    EXPECT_EQ(send.target_access, 0u);
    EXPECT_TRUE(send.runs_over_ud);

    const Operation& write_imm = operation(Op::kWriteImm);
    EXPECT_EQ(write_imm.target_completion, IBV_WC_RECV_RDMA_WITH_IMM);
    EXPECT_FALSE(write_imm.data_in_receive());  // its receive has no SGE
    EXPECT_TRUE(write_imm.carries_immediate);

    const Operation& write = operation(Op::kWrite);
    EXPECT_FALSE(write.target_receives());
    EXPECT_EQ(write.reply, Reply::kStamp);

    for (Op atomic : {Op::kFetchAdd, Op::kCompareSwap}) {
        const Operation& row = operation(atomic);
        SCOPED_TRACE(row.name);
        EXPECT_EQ(row.fixed_size, 8u);
        EXPECT_EQ(row.target_access, unsigned{IBV_ACCESS_REMOTE_ATOMIC});
        EXPECT_TRUE(row.atomic && row.lands_at_initiator && row.lands_at_target);
        EXPECT_FALSE(row.runs_over_uc || row.runs_over_ud || row.can_inline);
    }
    EXPECT_EQ(operation(Op::kFetchAdd).verify, Verify::kTargetCounter);
    EXPECT_EQ(operation(Op::kCompareSwap).verify, Verify::kNothing);  // compare 0, swap 0
}

TEST(BenchOperations, EveryNameParsesAndRoundTrips) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < kOperations.size(); ++i) {
        const Operation& row = kOperations[i];
        EXPECT_EQ(static_cast<std::size_t>(row.op), i) << row.name << ": rows follow the enum";
        EXPECT_TRUE(names.insert(row.name).second) << row.name << " is named twice";
        ASSERT_EQ(parse_op(row.name), row.op) << row.name;
        EXPECT_STREQ(op_name(row.op), row.name);
        EXPECT_EQ(&operation(row.op), &row);
        // Through a configuration's JSON, as a server receives it.
        BenchConfig config;
        config.op = row.op;
        if (row.fixed_size > 0) config.size = row.fixed_size;
        EXPECT_EQ(BenchConfig::from_json(config.to_json()).op, row.op) << row.name;
        EXPECT_NE(op_names().find(row.name), std::string::npos) << "the help and refusals list it";
    }
    EXPECT_FALSE(parse_op("CAS"));
    EXPECT_FALSE(parse_op(""));
    EXPECT_STREQ(op_name(static_cast<Op>(kOperations.size())), "?");
    // Today's help and refusal texts, as they read before the table (a row added extends them).
    EXPECT_EQ(op_names(), "write, read, send, write-imm, fetch-add, cmp-swap");
    EXPECT_EQ(op_names(&Operation::can_inline, " and "), "write, send and write-imm");
}

// The rules of BenchConfig::problem() and the knobs' default sizes follow each row's fields.
TEST(BenchOperations, TheRulesFollowTheRows) {
    for (const Operation& row : kOperations) {
        SCOPED_TRACE(row.name);
        BenchConfig c;
        c.op = row.op;
        c.size = row.fixed_size > 0 ? row.fixed_size : 64;
        EXPECT_FALSE(c.problem()) << *c.problem();
        c.transport = Transport::kUC;
        EXPECT_EQ(c.problem().has_value(), !row.runs_over_uc);
        c.transport = Transport::kUD;
        EXPECT_EQ(c.problem().has_value(), !row.runs_over_ud);
        c.transport = Transport::kRC;
        c.srq = true;
        EXPECT_EQ(c.problem().has_value(), !row.target_receives());
        c.srq = false;
        c.inline_size = 64;
        EXPECT_EQ(c.problem().has_value(), !row.can_inline);
        c.inline_size = 0;
        if (row.fixed_size > 0) {
            c.size = row.fixed_size * 2;
            ASSERT_TRUE(c.problem());
            EXPECT_NE(c.problem()->find("moves exactly 8 bytes"), std::string::npos);
        }
        KnobTexts knobs;
        knobs.op = row.name;
        const std::vector<BenchConfig> configs = expand_knobs(knobs, false);
        ASSERT_EQ(configs.size(), 1u);
        EXPECT_EQ(configs[0].size, row.fixed_size > 0 ? row.fixed_size : 65536u);
    }
}

// ---- The sources: one place lists the operations.

std::string operations_read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// A line of code (comments removed) that branches on the operation itself: a switch over an
// operation or opcode, a comparison with an Op enumerator or a work request opcode, or the
// helpers the table replaced.
bool operations_branches_on_op(const std::string& line) {
    static const std::regex pattern(
        R"(\bswitch\s*\([^)]*\b(op|opcode)\s*\))"
        R"(|(==|!=)\s*(Op::k|IBV_WR_)|\b(Op::k|IBV_WR_)\w+\s*(==|!=)|\bcase\s+(Op::k|IBV_WR_))"
        R"(|\b(is_atomic|receiver_counts|opcode_of|remote_access)\s*\()");
    return std::regex_search(line.substr(0, line.find("//")), pattern);
}

TEST(BenchOperations, ThePatternFindsWhatTheSourcesOnceHad) {
    for (const char* line : {
             "    switch (op) {",
             "    switch (wr.opcode) {",
             "    if (config_.op == Op::kWrite) {",
             "    if (c.mode != Mode::kLatency || c.op != Op::kWrite) return std::nullopt;",
             "        case Op::kFetchAdd:",
             "        case IBV_WR_RDMA_WRITE:",
             "    if (is_atomic(c.op) && a.atomic_cap == IBV_ATOMIC_NONE)",
             "        } else if (receiver_counts(config.op)) {",
             "    if (!parse_op(o.op) || (*parse_op(o.op) != Op::kWrite &&",
             "        wr.opcode = opcode_of(config_.op);",
             "    if (wr.opcode == IBV_WR_RDMA_READ) return;",
         })
        EXPECT_TRUE(operations_branches_on_op(line)) << line;
    for (const char* line : {
             "    if (operation_.reply == Reply::kStamp) {",
             "    switch (t) {",
             "    switch (choice.kind) {",
             "    Op op = Op::kWrite;",
             "        wr.opcode = operation_.opcode;",
             "    if (c.op == x) return;  // not config.op == Op::kWrite any more",
             "        if (wc.opcode & IBV_WC_RECV) {",
         })
        EXPECT_FALSE(operations_branches_on_op(line)) << line;
}

// Each place that branches on an operation is a place to find and change when one is added;
// asking the row's field instead keeps that to the one header (and its test).
TEST(BenchOperations, NoSourceButTheTableBranchesOnTheOperation) {
    const std::filesystem::path root = RDMALAB_SOURCE_DIR;
    const std::filesystem::path table = root / "bench/include/rdmalab/bench/operations.hpp";
    std::size_t files = 0;
    for (const char* folder : {"bench/src", "bench/tool", "bench/include", "mesh"}) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
            const std::string extension = entry.path().extension().string();
            if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
            if (std::filesystem::equivalent(entry.path(), table)) continue;
            ++files;
            std::istringstream text(operations_read(entry.path()));
            std::string line;
            for (int number = 1; std::getline(text, line); ++number)
                EXPECT_FALSE(operations_branches_on_op(line))
                    << std::filesystem::relative(entry.path(), root).string() << ":" << number
                    << " branches on the operation: ask its row (operation(op).<field>, "
                       "bench/include/rdmalab/bench/operations.hpp) instead: `"
                    << line << "`";
        }
    }
    EXPECT_GT(files, 20u) << "the sources were not found under " << root;
}

// The enum and the table are the one list: as many enumerators as rows (rows in the enum's order
// are checked by the header's static_assert).
TEST(BenchOperations, EveryEnumeratorHasItsRow) {
    const std::string header = operations_read(std::filesystem::path(RDMALAB_SOURCE_DIR) /
                                               "bench/include/rdmalab/bench/operations.hpp");
    std::smatch declaration;
    ASSERT_TRUE(std::regex_search(header, declaration, std::regex(R"(enum class Op \{([^}]*)\})")))
        << "no `enum class Op { … }` in operations.hpp";
    const std::string enumerators = declaration[1].str();
    const std::regex enumerator(R"(\bk\w+)");
    const auto count =
        std::distance(std::sregex_iterator(enumerators.begin(), enumerators.end(), enumerator),
                      std::sregex_iterator());
    EXPECT_EQ(static_cast<std::size_t>(count), kOperations.size());
}

}  // namespace
}  // namespace rdmalab::bench
