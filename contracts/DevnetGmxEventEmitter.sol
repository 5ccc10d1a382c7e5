// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxEvents, GmxKeys, GmxRoleModule, IGmxRoleStore} from "DevnetGmxCommon.sol";

/// @notice GMX v2's EventEmitter for the devnet: EventLog/EventLog1/EventLog2 exactly as the real one logs them
/// (eventNameHash = the indexed event name, topics as GMX sets them), emitted for CONTROLLERs only.
contract DevnetGmxEventEmitter is GmxRoleModule {
    event EventLog(address msgSender, string eventName, string indexed eventNameHash, GmxEvents.EventLogData eventData);
    event EventLog1(address msgSender, string eventName, string indexed eventNameHash, bytes32 indexed topic1, GmxEvents.EventLogData eventData);
    event EventLog2(
        address msgSender, string eventName, string indexed eventNameHash, bytes32 indexed topic1, bytes32 indexed topic2, GmxEvents.EventLogData eventData
    );

    constructor(IGmxRoleStore roleStore_) GmxRoleModule(roleStore_) {}

    function emitEventLog(string memory eventName, GmxEvents.EventLogData memory eventData) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        emit EventLog(msg.sender, eventName, eventName, eventData);
    }

    function emitEventLog1(string memory eventName, bytes32 topic1, GmxEvents.EventLogData memory eventData)
        external
        onlyRole(GmxKeys.CONTROLLER, "CONTROLLER")
    {
        emit EventLog1(msg.sender, eventName, eventName, topic1, eventData);
    }

    function emitEventLog2(string memory eventName, bytes32 topic1, bytes32 topic2, GmxEvents.EventLogData memory eventData)
        external
        onlyRole(GmxKeys.CONTROLLER, "CONTROLLER")
    {
        emit EventLog2(msg.sender, eventName, eventName, topic1, topic2, eventData);
    }
}
